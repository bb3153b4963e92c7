import "server-only";
import { config } from "@/lib/config";
import { notificationsConfig } from "@/lib/config/notifications";
import { documentStorageConfig } from "@/lib/config/storage";
import { getDb } from "@/lib/db/client";
import { log } from "@/lib/log";
import { startNotificationWorker } from "@/lib/notifications/worker";

/**
 * Server start: validate every configuration variable (fail fast, naming the
 * field), open the database, and start the in-process notification worker.
 */
export async function boot(): Promise<void> {
  const cfg = config();
  const notifications = notificationsConfig();
  const documents = documentStorageConfig();
  const started = Date.now();
  const db = await getDb();
  if (notifications.in_process_worker) await startNotificationWorker();
  log.info("quarry ready", { database: db.kind, dataDir: cfg.dataDir, documentStorage: documents.storage.provider, ms: Date.now() - started });
}
