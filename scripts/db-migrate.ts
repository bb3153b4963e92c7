// Applies pending SQL migrations (prisma/migrations) to DATABASE_URL, or to the embedded database.
import { closeDb, getDb } from "@/lib/db/client";
import { clientRunner, connectServer } from "@/lib/db/server";
import { migrate } from "@/lib/db/migrate";
import { config } from "@/lib/config";

if (config().database.kind === "postgres") {
  const client = await connectServer();
  const applied = await migrate(clientRunner(client));
  console.log(applied.length ? `Applied: ${applied.join(", ")}` : "Database is up to date.");
  await client.end();
} else {
  await getDb();
  console.log("Embedded database is up to date.");
  await closeDb();
}
