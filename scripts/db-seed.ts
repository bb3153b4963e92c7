// Migrates and seeds the configured database (DATABASE_URL, or PGlite in QUARRY_DATA_DIR).
import { closeDb, getDb } from "@/lib/db/client";
import { clientRunner, connectServer } from "@/lib/db/server";
import { migrate } from "@/lib/db/migrate";
import { seedDemo } from "@/lib/demo/seed";
import { seedDemoTables } from "@/lib/data/demo";
import { config } from "@/lib/config";

const database = config().database;
if (database.kind === "postgres") {
  const client = await connectServer();
  const runner = clientRunner(client);
  await migrate(runner);
  console.log((await seedDemo(runner)) ? "Seeded the demo data." : "Demo data already present.");
  await client.end();
  // The demo organizations' own table (issue 42) loads as an upload does: through the application's tenant transactions.
  if ((await seedDemoTables()) > 0) console.log("Loaded the demo table.");
  await closeDb();
} else {
  const { system } = await getDb(); // the embedded engine migrates when it opens
  console.log((await seedDemo(system)) ? "Embedded database migrated and seeded." : "Embedded database migrated; demo data already present.");
  if ((await seedDemoTables()) > 0) console.log("Loaded the demo table.");
  await closeDb();
  // Opened once more: statistics of everything seeded (and of the reads that followed: hint bits are written to the WAL
  // too) are gathered and remembered now, so the next start, and each test file's copy, need not gather them again.
  await getDb();
  await closeDb();
}
