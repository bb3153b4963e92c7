import "server-only";
import { config } from "@/lib/config";
import { getDb } from "@/lib/db/client";
import { log } from "@/lib/log";

/** Server start: validate configuration (fail fast, naming the field) and open the database. */
export async function boot(): Promise<void> {
  const cfg = config();
  const started = Date.now();
  const db = await getDb();
  log.info("quarry ready", { database: db.kind, dataDir: cfg.dataDir, ms: Date.now() - started });
}
