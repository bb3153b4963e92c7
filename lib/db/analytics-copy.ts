import { PrismaPg } from "@prisma/adapter-pg";
import { log } from "@/lib/log";
import { EmbeddedEngine } from "./embedded-engine";
import { PrismaClient } from "./generated/client";
import { ORG_SCHEMA_PREFIX, READER_TABLES } from "./warehouse";

/** The limit for analytics statements that set none; user SQL always sets its own (withTenant). */
const ANALYTICS_DEFAULT_LIMIT_MS = 120_000;
/**
 * A lease held this long is a long statement, likely to make the next caller wait: a spare starts then.
 * About what a spare takes to copy and start (1-1.5 s): a statement over sooner makes the next caller
 * wait less than a spare would, and each spare is ~200 MB while it runs (issue 31's memory budget).
 */
const SPARE_WARM_AFTER_MS = 1_500;

/**
 * A running idle copy catches up this long after a write the reader sees (a burst of statements, one load's
 * batches, is one catch-up), so the next reader finds it fresh instead of waiting for it.
 */
const CATCH_UP_AFTER_MS = 200;
/** Write generations remembered with what they changed; a copy further behind is taken whole. */
const CHANGES_KEPT = 1_000;

/**
 * A reader table as its change notice names it (`schema.table`, format's %I quoting, migration
 * 0054): a table of the declaration's READER_TABLES in `public`, or an organization's own table.
 * Anything else is not proven to be a table the copy keeps, so it makes the copy whole again.
 */
const NOTICED_TABLE = new RegExp(`^(?:public\\.("?)(${Object.keys(READER_TABLES).join("|")})\\1|${ORG_SCHEMA_PREFIX}[0-9a-f]{16}\\.("?)[a-z_][a-z0-9_]{0,62}\\3)$`);

/** Schema, function and privilege changes (migrations, tests' helper functions). */
const DEFINITION_CHANGE = /(?:^|;)\s*(?:CREATE|ALTER|DROP|GRANT|REVOKE)\s/i;
/**
 * One statement that defines only a temporary object (a load's staging table, its index and grant):
 * the session's own, never in a copy. Told by its text: CREATE TEMP, or its one object qualified by pg_temp.
 */
const TEMPORARY_DEFINITION = /^\s*(?:CREATE\s+(?:TEMP|TEMPORARY)\s+TABLE\s|(?:CREATE\s+(?:UNIQUE\s+)?INDEX|GRANT)(?:\s[^;]*?)?\sON\s+(?:TABLE\s+)?pg_temp\.[a-z_][a-z0-9_]*\s)[^;]*;?\s*$/i;

/**
 * Empties, in an analytics copy, every table the reader role may not read: users, sessions, keys,
 * secrets, documents, notification and report state. PGlite has one session user, the embedded
 * superuser, so a statement that got past the allow-list and reset its role would read the whole copy
 * (docs/embedded-engine.md); a copy that holds only what quarry_reader may read leaves it nothing
 * more than the warehouse. Kept: the tables the reader may read, organizations' own tables (each
 * granted to its organization's reader role alone, lib/data/storage.ts), the tenant key its signed settings
 * are checked against (read by SECURITY DEFINER functions), the migrations ledger, and every table a
 * kept one references (a TRUNCATE must not cascade into them).
 */
export const STRIP_TO_READER_TABLES = `DO $strip$
DECLARE targets text;
BEGIN
  WITH RECURSIVE kept(oid) AS (
    SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p')
       AND ((n.nspname = 'public' AND (has_table_privilege('quarry_reader', c.oid, 'SELECT') OR c.relname IN ('quarry_tenant_key', '_quarry_migrations')))
            OR n.nspname LIKE 'quarry\\_data\\_%')
    UNION
    SELECT k.confrelid FROM pg_constraint k JOIN kept ON k.conrelid = kept.oid WHERE k.contype = 'f'
  )
  SELECT string_agg(format('%I.%I', n.nspname, c.relname), ', ') INTO targets
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
     AND c.oid NOT IN (SELECT oid FROM kept);
  IF targets IS NOT NULL THEN EXECUTE 'TRUNCATE ' || targets; END IF;
END $strip$`;

/** A reader client held for one transaction; `release` hands its engine back to the pool. */
export interface ReaderLease {
  prisma: PrismaClient;
  release(): void;
}

/** One analytics engine process and the generation of the primary's data its copy holds. */
interface Replica {
  readonly index: number;
  readonly dataDir: string;
  engine?: EmbeddedEngine;
  client?: PrismaClient;
  /** The write generation the copy was taken at; -1 before the first copy. */
  copied: number;
  leases: number;
  preparing?: Promise<void>;
  stopping?: Promise<void>;
  idleTimer?: NodeJS.Timeout;
}

export interface AnalyticsCopyOptions {
  /** Engine processes at most, each on its own copy: one organization's runaway holds one (the fair queue's per-organization limit), the others serve the rest. */
  engines: number;
  /** An engine stops after this long without work, giving its memory back (issue 31: the embedded tree's memory budget). */
  idleMs: number;
}

/**
 * The embedded analytics engines: engine processes on consistent copies of the primary's data,
 * serving the `quarry_reader` work (user SQL, datasets, previews, rule evaluation). A runaway user
 * query then holds one analytics engine's one connection, while the primary keeps answering the
 * app, and a spare engine answers every other organization: PGlite runs one statement at a time,
 * so with one engine another organization's light query waited out the runaway's whole time limit
 * (issue 26: p95 46x idle in `npm run bench -- user-sql-fairness`).
 *
 * An engine starts on first use; a spare starts when a caller finds every running engine taken, or
 * in the background once a statement has held every running engine for a moment (so the next
 * caller rarely waits for its boot). Every engine stops when idle, giving its memory back. A copy is
 * made by the primary engine between two statements, after CHECKPOINT, on an engine's start and
 * again before its next use whenever a statement sent to the primary wrote a table the reader role
 * may read (told by the table's trigger, migration 0048) or changed a definition (the demo seed, tests, an operator's script): the request then
 * waits for a fresh copy (a few seconds) rather than reading stale rows.
 */
export class AnalyticsCopy {
  /** Counts the primary's writes that reader copies must see. */
  private generation = 0;
  /** What each recent generation changed: one reader table's rows, or `"all"` (a definition, an unnamed table). */
  private readonly changes = new Map<number, string>();
  /** The primary engine, known from the first lease: idle copies catch up from it. */
  private primary?: EmbeddedEngine;
  private catchUpTimer?: NodeJS.Timeout;
  private readonly replicas: Replica[];
  private closed = false;

  constructor(
    primaryDir: string,
    private readonly options: AnalyticsCopyOptions = { engines: 1, idleMs: 300_000 },
  ) {
    this.replicas = Array.from({ length: Math.max(1, options.engines) }, (_, index) => ({
      index,
      dataDir: index === 0 ? `${primaryDir}-analytics` : `${primaryDir}-analytics-${index}`,
      copied: -1,
      leases: 0,
    }));
  }

  /** The first analytics engine's supervisor, while it runs (tests and benches read its state). */
  get current(): EmbeddedEngine | undefined {
    return this.replicas[0].engine;
  }

  /** How many running analytics engines hold a copy older than the primary's last write the reader sees (tests). */
  get behind(): number {
    return this.replicas.filter((replica) => replica.engine && replica.copied !== this.generation).length;
  }

  /** How many analytics engine processes run now (tests, benches). */
  get running(): number {
    return this.replicas.filter((replica) => replica.engine).length;
  }

  noteStatement(text: string): void {
    if (DEFINITION_CHANGE.test(text) && !TEMPORARY_DEFINITION.test(text)) this.noteChange("all");
  }

  /**
   * A statement on the primary wrote a table the reader reads (its trigger's notice, READER_TABLES_CHANGED in
   * warehouse.ts); `table` is the notice's detail, `schema.table`.
   */
  noteReaderTablesChanged(table: string | undefined): void {
    this.noteChange(table !== undefined && NOTICED_TABLE.test(table) ? table : "all");
  }

  private noteChange(change: string): void {
    this.changes.set(++this.generation, change);
    this.changes.delete(this.generation - CHANGES_KEPT);
    this.scheduleCatchUp();
  }

  private scheduleCatchUp(): void {
    if (this.catchUpTimer || !this.primary || this.closed) return;
    this.catchUpTimer = setTimeout(() => {
      this.catchUpTimer = undefined;
      this.catchUp();
    }, CATCH_UP_AFTER_MS);
    this.catchUpTimer.unref();
  }

  /** Running engines nobody holds take the writes they miss now (a lease would wait for them otherwise). */
  private catchUp(): void {
    const primary = this.primary;
    if (this.closed || !primary) return;
    for (const replica of this.replicas) {
      if (!replica.engine || replica.preparing || replica.stopping || replica.leases > 0 || replica.copied === this.generation) continue;
      replica.preparing = this.refresh(replica, primary)
        .catch((error: unknown) => log.warn("analytics copy did not catch up", { engine: replica.index, error: (error as Error).message }))
        .finally(() => {
          replica.preparing = undefined;
          // Written to again meanwhile: the timer that write set found this engine busy.
          if (replica.copied !== this.generation) this.scheduleCatchUp();
        });
    }
  }

  /** The tables whose rows changed since `copied`, or undefined when the copy must be taken whole. */
  private changedSince(copied: number): string[] | undefined {
    if (copied < 0 || this.generation - copied >= CHANGES_KEPT) return undefined;
    const tables = new Set<string>();
    for (let generation = copied + 1; generation <= this.generation; generation++) {
      const change = this.changes.get(generation);
      if (change === undefined || change === "all") return undefined;
      tables.add(change);
    }
    return [...tables];
  }

  /** An engine's client on a copy no older than the last write the reader role could see, held until `release`. */
  async lease(primary: EmbeddedEngine): Promise<ReaderLease> {
    if (this.closed) throw new Error("the embedded database is closed");
    this.primary = primary;
    const replica = this.pick();
    replica.leases++;
    clearTimeout(replica.idleTimer);
    try {
      while (!replica.engine || replica.copied !== this.generation || replica.preparing) {
        replica.preparing ??= this.refresh(replica, primary).finally(() => (replica.preparing = undefined));
        await replica.preparing;
      }
    } catch (error) {
      this.unlease(replica);
      throw error;
    }
    const client = replica.client;
    if (!client) throw new Error("the analytics engine is not open");
    const warm = setTimeout(() => this.warmSpare(primary), SPARE_WARM_AFTER_MS);
    warm.unref();
    let released = false;
    return {
      prisma: client,
      release: () => {
        if (released) return;
        released = true;
        clearTimeout(warm);
        this.unlease(replica);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.catchUpTimer);
    await Promise.all(
      this.replicas.map(async (replica) => {
        clearTimeout(replica.idleTimer);
        await replica.preparing?.catch(() => undefined);
        await replica.stopping;
        await replica.client?.$disconnect();
        await replica.engine?.close();
      }),
    );
  }

  /** A free engine (a running one first, then one to start), else the least taken. */
  private pick(): Replica {
    const free = this.replicas.filter((replica) => replica.leases === 0);
    return free.find((replica) => replica.engine || replica.preparing) ?? free[0] ?? this.replicas.reduce((a, b) => (b.leases < a.leases ? b : a));
  }

  /** Every running engine is taken: start a spare now, so the next caller does not queue behind a long statement. */
  private warmSpare(primary: EmbeddedEngine): void {
    if (this.closed || this.replicas.some((replica) => replica.leases === 0 && (replica.engine || replica.preparing))) return;
    const spare = this.replicas.find((replica) => !replica.engine && !replica.preparing);
    if (!spare) return;
    spare.preparing = this.refresh(spare, primary)
      .catch((error: unknown) => log.warn("analytics spare did not start", { engine: spare.index, error: (error as Error).message }))
      .finally(() => {
        spare.preparing = undefined;
        if (spare.leases === 0) this.scheduleStop(spare);
      });
  }

  private unlease(replica: Replica): void {
    replica.leases--;
    if (replica.leases === 0) this.scheduleStop(replica);
  }

  private scheduleStop(replica: Replica): void {
    if (this.closed) return;
    clearTimeout(replica.idleTimer);
    replica.idleTimer = setTimeout(() => this.stopIfIdle(replica), this.options.idleMs);
    replica.idleTimer.unref();
  }

  private stopIfIdle(replica: Replica): void {
    if (this.closed || replica.leases > 0 || !replica.engine) return;
    // Catching up (no lease holds it): stopped once that ends, unless a reader took it meanwhile.
    if (replica.preparing) {
      void replica.preparing.catch(() => undefined).then(() => this.stopIfIdle(replica));
      return;
    }
    const { engine, client } = replica;
    replica.engine = undefined;
    replica.client = undefined;
    replica.copied = -1;
    replica.stopping = (async () => {
      await client?.$disconnect();
      await engine.close();
      log.info("analytics engine stopped when idle", { engine: replica.index });
    })().finally(() => (replica.stopping = undefined));
  }

  private async refresh(replica: Replica, primary: EmbeddedEngine): Promise<void> {
    if (this.closed) throw new Error("the embedded database is closed");
    const started = Date.now();
    // Read first: a write arriving while the copy is made leaves the copy one generation behind.
    const generation = this.generation;
    await replica.stopping;
    if (!replica.engine) {
      await primary.snapshot(replica.dataDir);
      // Niced: a runaway query here yields the CPU to the web process and the primary engine.
      const engine = new EmbeddedEngine({ dataDir: replica.dataDir, defaultLimitMs: ANALYTICS_DEFAULT_LIMIT_MS, name: replica.index === 0 ? "analytics" : `analytics-${replica.index}`, niceness: 10 });
      try {
        await engine.start();
      } catch (error) {
        await engine.close();
        throw error;
      }
      replica.engine = engine;
      replica.client = new PrismaClient({ adapter: new PrismaPg(engine.pool) });
    } else {
      const tables = this.changedSince(replica.copied);
      try {
        if (tables) {
          await copyTables(primary, replica.engine, tables);
          replica.copied = generation;
          log.info("analytics copy refreshed", { engine: replica.index, tables: tables.length, ms: Date.now() - started });
          return;
        }
      } catch (error) {
        // Rolled back on the copy: it holds what it held, and is taken whole instead.
        log.warn("analytics copy of changed tables failed", { engine: replica.index, error: (error as Error).message });
      }
      await replica.engine.reload((target) => primary.snapshot(target));
    }
    await replica.engine.pool.query(STRIP_TO_READER_TABLES);
    replica.copied = generation;
    log.info("analytics copy refreshed", { engine: replica.index, ms: Date.now() - started });
  }
}

/**
 * Takes again only the tables whose rows changed (no definition did): their rows read from the
 * primary at one point of its history, then swapped in on the copy in one transaction, so a reader
 * of the copy sees every table as before or every one as now, never half a load. Replication role:
 * the copy's foreign keys and triggers stay quiet while a referenced table is emptied and filled
 * (the primary already held its rows to them). 1,000 rows: about 0.1 s instead of 7 s for a whole
 * copy and an engine restart (docs/data.md, "Freshness on the embedded engine").
 */
async function copyTables(primary: EmbeddedEngine, copy: EmbeddedEngine, tables: readonly string[]): Promise<void> {
  const rows = await primary.exportTables(tables);
  const client = await copy.pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SET LOCAL session_replication_role = replica");
    for (const [table, data] of rows) {
      await client.query(`DELETE FROM ${table}`);
      await copy.copyInSession(`COPY ${table} FROM STDIN WITH (FORMAT binary)`, data);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
