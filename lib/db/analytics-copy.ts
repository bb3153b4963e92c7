import { PrismaPg } from "@prisma/adapter-pg";
import { log } from "@/lib/log";
import { EmbeddedEngine } from "./embedded-engine";
import { PrismaClient } from "./generated/client";

/** The limit for analytics statements that set none; user SQL always sets its own (withTenant). */
const ANALYTICS_DEFAULT_LIMIT_MS = 120_000;

/**
 * What quarry_reader may read (migration 0001: organizations, locations, products, orders,
 * sales_targets), written or redefined. Statements are matched as sent, quoted or not.
 */
const READER_TABLE_WRITE = /\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?|COPY|ALTER\s+TABLE|DROP\s+TABLE)\s+(?:ONLY\s+)?(?:"?public"?\.)?"?(?:organizations|locations|products|orders|sales_targets)\b/i;
/** Schema, function and privilege changes (migrations, tests' helper functions). */
const DEFINITION_CHANGE = /(?:^|;)\s*(?:CREATE|ALTER|DROP|GRANT|REVOKE)\s/i;

/**
 * The embedded analytics engine: a second engine process on a consistent copy of the primary's
 * data, serving the `quarry_reader` work (user SQL, datasets, previews, rule evaluation). A
 * runaway user query then holds only this engine's one connection, while the primary keeps
 * answering the app and every other organization's API.
 *
 * The copy is made by the primary engine between two statements, after CHECKPOINT, on first use
 * and again whenever a statement sent to the primary wrote a table the reader role may read or
 * changed a definition (the demo seed, tests, an operator's script): the next analytics request
 * then waits for a fresh copy (a few seconds) rather than reading stale rows.
 */
export class AnalyticsCopy {
  private engine: EmbeddedEngine | undefined;
  private client: PrismaClient | undefined;
  private stale = true;
  private refreshing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly primaryDir: string) {}

  /** The analytics engine's supervisor, once started (tests and benches read its state). */
  get current(): EmbeddedEngine | undefined {
    return this.engine;
  }

  noteStatement(text: string): void {
    if (!this.stale && (READER_TABLE_WRITE.test(text) || DEFINITION_CHANGE.test(text))) this.stale = true;
  }

  /** A Prisma client on a copy no older than the last write the reader role could see. */
  async prisma(primary: EmbeddedEngine): Promise<PrismaClient> {
    while (this.stale || this.refreshing) {
      this.refreshing ??= this.refresh(primary).finally(() => (this.refreshing = undefined));
      await this.refreshing;
    }
    if (!this.client) throw new Error("the analytics engine is not open");
    return this.client;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.refreshing?.catch(() => undefined);
    await this.client?.$disconnect();
    await this.engine?.close();
  }

  private async refresh(primary: EmbeddedEngine): Promise<void> {
    if (this.closed) throw new Error("the embedded database is closed");
    const started = Date.now();
    // Cleared first: a write arriving while the copy is made marks it stale again.
    this.stale = false;
    const dataDir = `${this.primaryDir}-analytics`;
    try {
      if (!this.engine) {
        await primary.snapshot(dataDir);
        // Niced: a runaway query here yields the CPU to the web process and the primary engine.
        this.engine = new EmbeddedEngine({ dataDir, defaultLimitMs: ANALYTICS_DEFAULT_LIMIT_MS, name: "analytics", niceness: 10 });
        await this.engine.start();
        this.client = new PrismaClient({ adapter: new PrismaPg(this.engine.pool) });
      } else {
        await this.engine.reload((target) => primary.snapshot(target));
      }
    } catch (error) {
      this.stale = true;
      throw error;
    }
    log.info("analytics copy refreshed", { ms: Date.now() - started });
  }
}
