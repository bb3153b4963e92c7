import "server-only";
import { localIssuerKey } from "@/lib/auth/local-issuer";
import { config } from "@/lib/config";
import { chatConfig } from "@/lib/config/chat";
import { extractionLimits } from "@/lib/config/extraction";
import { notificationsConfig } from "@/lib/config/notifications";
import { documentStorageConfig } from "@/lib/config/storage";
import { seedDemoDashboards } from "@/lib/dashboards/demo";
import { recordUnrecordedVersionRollups } from "@/lib/dashboards/version-rollups";
import { getDb } from "@/lib/db/client";
import { markStarted } from "@/lib/db/health";
import { migrate } from "@/lib/db/migrate";
import { seedDemo } from "@/lib/demo/seed";
import { seedDemoTables } from "@/lib/data/demo";
import { withStartupLock } from "@/lib/db/startup-lock";
import { seedDemoDocuments } from "@/lib/documents/demo";
import { seedDemoOutbox } from "@/lib/notifications/admin/demo-outbox";
import { startIndexWorker } from "@/lib/documents/indexing/index-jobs";
import { embeddingStatus } from "@/lib/embeddings";
import { log } from "@/lib/log";
import { startNotificationWorker } from "@/lib/worker";
import { startRollupWorker } from "@/lib/rollups/jobs";
import { startPullWorker } from "@/lib/data/pipes/jobs";
import { startAuditRetentionWorker } from "@/lib/audit/retention";

/**
 * Server start: validate every configuration variable (fail fast, naming the
 * field), open the database, apply migrations and demo data (once, across
 * replicas), and start the in-process notification worker.
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
  // Replicas starting together take turns here (an advisory lock), and every step is idempotent:
  // the second finds the first one's migrations and demo data in place and goes on.
  await withStartupLock(async (session) => {
    if (db.kind === "postgres") {
      // The embedded engine migrates when it opens; a server does it here, so a fresh database comes
      // up too. Production runs `npm run db:migrate` before a rollout (docs/deploy.md), and then this
      // finds nothing to apply.
      const applied = await migrate(session);
      if (applied.length > 0) log.info("migrations applied", { applied });
    }
    const recorded = await recordUnrecordedVersionRollups();
    if (recorded > 0) log.info("rollups of earlier dashboard versions recorded", { versions: recorded });
    if (cfg.seedDemo) {
      if (await seedDemo(session)) log.info("demo data loaded");
      // The demo organizations' own table (issue 42 §4), before the sample dashboard that reads it.
      const tables = await seedDemoTables();
      if (tables > 0) log.info("demo table loaded", { organizations: tables });
      const seeded = await seedDemoDashboards();
      if (seeded > 0) log.info("sample dashboard loaded", { organizations: seeded });
      const withDocuments = await seedDemoDocuments();
      if (withDocuments > 0) log.info("sample documents loaded", { organizations: withDocuments });
      const outboxes = await seedDemoOutbox();
      if (outboxes > 0) log.info("demo e-mail outbox configured", { organizations: outboxes });
      // The first boot's bulk loads grew the embedded engine's WebAssembly heap by about 300 MB, which
      // it never gives back; a new engine process on the same (checkpointed) data starts at its
      // steady size (bench/embedded-memory.ts).
      if (db.engine && (seeded > 0 || withDocuments > 0)) {
        await session.exec("CHECKPOINT");
        await db.engine.restart("a fresh engine process after the first boot's demo data, to shed the memory its loading took");
      }
    }
  });
  // A server runs user-written SQL only on a confined login: say now whether there is one.
  const userSqlProblem = (await db.userSqlProblem?.()) ?? null;
  if (userSqlProblem) log.warn("user-written SQL (sql widgets, query datasets) is refused on this server", { reason: userSqlProblem });
  // The embedded issuer's key, made now so `npm run token` finds it (it never makes one: issue 32).
  if (!cfg.auth.jwksUrl) await localIssuerKey();
  if (notifications.in_process_worker) {
    await startNotificationWorker();
    // Document indexing jobs (issue 28) share the queue and its worker placement.
    await startIndexWorker();
    await startRollupWorker();
    // Data pulls (issue 42 §5): their minute tick and run jobs, where the worker runs.
    await startPullWorker();
    // The audit log's daily retention (issue 43 §5).
    await startAuditRetentionWorker();
  }
  markStarted();
  log.info("quarry ready", { database: db.kind, dataDir: cfg.dataDir, documentStorage: documents.storage.provider, embeddings: `${embeddings.provider}/${embeddings.model}`, chatModel: chat.model?.model ?? "none", ms: Date.now() - started });
}
