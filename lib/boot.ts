import "server-only";
import { config } from "@/lib/config";
import { chatConfig } from "@/lib/config/chat";
import { extractionLimits } from "@/lib/config/extraction";
import { notificationsConfig } from "@/lib/config/notifications";
import { documentStorageConfig } from "@/lib/config/storage";
import { seedDemoDashboards } from "@/lib/dashboards/demo";
import { getDb } from "@/lib/db/client";
import { seedDemoDocuments } from "@/lib/documents/demo";
import { embeddingStatus } from "@/lib/embeddings";
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
  extractionLimits();
  // Parses EMBEDDING_PROVIDER_CONFIG (a malformed one stops the start); a provider lacking its key only warns (SPEC §7.3).
  const embeddings = embeddingStatus();
  if (!embeddings.configured) log.warn("embedding provider is not configured", { provider: embeddings.provider, reason: embeddings.reason });
  // Parses CHAT_MODEL_CONFIG (a malformed one stops the start); unset means chat answers with the retrieved passages.
  const chat = chatConfig();
  const started = Date.now();
  const db = await getDb();
  if (cfg.seedDemo) {
    const seeded = await seedDemoDashboards();
    if (seeded > 0) log.info("sample dashboard loaded", { organizations: seeded });
    const withDocuments = await seedDemoDocuments();
    if (withDocuments > 0) log.info("sample documents loaded", { organizations: withDocuments });
  }
  if (notifications.in_process_worker) await startNotificationWorker();
  log.info("quarry ready", { database: db.kind, dataDir: cfg.dataDir, documentStorage: documents.storage.provider, embeddings: `${embeddings.provider}/${embeddings.model}`, chatModel: chat.model?.model ?? "none", ms: Date.now() - started });
}
