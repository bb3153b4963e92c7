import "server-only";
import { Unavailable } from "@/lib/errors";
import { getDb } from "./client";
import { listMigrations } from "./migrate";
import { processSingleton } from "@/lib/process-singleton";

/**
 * Live once the database is open and answers; 503 otherwise (liveness probes, the e2e runner).
 * The embedded engine answers from its supervisor's state, never waiting on the engine process:
 * a long statement there must not make the service look down (a restart takes seconds).
 */
export async function checkHealth() {
  try {
    const db = await getDb();
    if (db.engine) {
      if (db.engine.state !== "ready" && db.engine.state !== "restarting") throw new Error(`embedded database ${db.engine.state}`);
    } else {
      await db.system.query("SELECT 1");
    }
    return { status: "ok" as const, database: db.kind };
  } catch {
    throw new Unavailable("database is not ready");
  }
}

/** What /api/ready says when every organization's user SQL shares the operator's login. */
const SHARED_LOGIN =
  "every organization's user SQL runs on the one login of QUARRY_READER_DATABASE_URL: each reads only its own rows, but organizations can see and end each other's running statements (docs/deploy.md)";

const started = processSingleton("started", () => ({ done: false }));
const shippedMigrations = processSingleton("shippedMigrations", () => listMigrations().map((m) => m.name));

/** Called by lib/boot.ts when start-up work (migrations, demo data, worker) is done. */
export function markStarted(): void {
  started.get().done = true;
}

/**
 * Ready for traffic behind a load balancer: this process has finished its start-up work, the
 * database answers, and every migration this build ships is applied (a replica rolled out
 * before `npm run db:migrate` stays out of rotation instead of failing requests).
 */
export async function checkReadiness() {
  if (!started.get().done) throw new Unavailable("starting: start-up work is not finished");
  const expected = shippedMigrations.get();
  let applied: string[];
  let kind: "pglite" | "postgres";
  let userSqlProblem: string | null;
  let logins: "per_organization" | "shared" | undefined;
  try {
    const db = await getDb();
    kind = db.kind;
    logins = db.userSqlLogins;
    applied = (await db.system.query<{ name: string }>("SELECT name FROM _quarry_migrations")).map((r) => r.name);
    userSqlProblem = (await db.userSqlProblem?.()) ?? null;
  } catch {
    throw new Unavailable("database is not ready");
  }
  const missing = expected.filter((name) => !applied.includes(name));
  if (missing.length > 0) throw new Unavailable(`database schema is behind this build: run npm run db:migrate (missing ${missing.join(", ")})`);
  // Ready either way: only dashboards' own SQL is refused without a reader login, and this says why.
  // On the operator's one shared login it runs, but organizations are not walled off from each other's sessions: said too.
  const userSql = userSqlProblem
    ? { status: "refused" as const, reason: userSqlProblem, ...(logins && { logins }) }
    : logins === "shared"
      ? { status: "ok" as const, logins, reason: SHARED_LOGIN }
      : { status: "ok" as const, ...(logins && { logins }) };
  return { status: "ready" as const, database: kind, migrations: applied.length, user_sql: userSql };
}
