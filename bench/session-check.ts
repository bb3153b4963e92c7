// npm run bench -- session-check [--engine pglite|postgres|both]: what checking a browser session
// against the database costs per cookie-authenticated request. Since issue 26 that is one query
// (lib/auth/directory.ts findSessionUser: the user's current row, its organization and the sign-out
// probe of quarry_revoked_sessions); before, two lookups ran side by side (the organization, and the
// sign-out probe), which are timed too for comparison, with the whole cookie-to-principal step.
// 10,000 revoked sessions in the table (a busy day's sign-outs).
import { NextRequest } from "next/server";
import { findOrganization, findSessionUser } from "@/lib/auth/directory";
import { principalFromSessionRequest } from "@/lib/auth/session";
import { isSessionRevoked } from "@/lib/auth/session-revocation";
import { sessionCookieFor } from "@/test/helpers";
import { benchEngines } from "./lib/scratch-db";
import { withSeededDb } from "./lib/seeded-db";

const CALLS = 2_000;
const REVOKED = 10_000;

export default async function bench(args: string[]): Promise<void> {
  for (const engine of benchEngines(args)) await withSeededDb(engine, (db) => run(engine, db));
}

async function run(engine: string, db: Awaited<ReturnType<typeof import("@/lib/db/client").getDb>>) {
  await db.system.query(
    `INSERT INTO quarry_revoked_sessions (session_id, expires_at)
     SELECT 'bench-' || g, now() + interval '1 hour' FROM generate_series(1, $1::int) g ON CONFLICT DO NOTHING`,
    [REVOKED],
  );
  await db.system.exec("ANALYZE quarry_revoked_sessions");
  const cookie = await sessionCookieFor("acme", "analyst");
  const request = () => new NextRequest("http://localhost:3000/api/v1/custom-dashboards", { headers: { cookie } });
  const time = async (work: (i: number) => Promise<unknown>) => {
    for (let i = 0; i < 100; i++) await work(i);
    const started = performance.now();
    for (let i = 0; i < CALLS; i++) await work(i);
    return ((performance.now() - started) / CALLS) * 1000;
  };
  const sessionId = (i: number) => (i % 2 === 0 ? `bench-${i % REVOKED}` : crypto.randomUUID());
  const revokedCheck = await time((i) => isSessionRevoked(sessionId(i)));
  const orgLookup = await time(() => findOrganization("acme"));
  const before = await time((i) => Promise.all([findOrganization("acme"), isSessionRevoked(sessionId(i))]));
  const userCheck = await time((i) => findSessionUser("usr_acme_analyst", sessionId(i)));
  const whole = await time(async () => {
    if (!(await principalFromSessionRequest(request()))) throw new Error("the bench cookie was refused");
  });
  console.log(`\n[${engine}] ${CALLS} calls each, ${REVOKED.toLocaleString("en-US")} revoked sessions in the table, mean per call`);
  console.log(`revoked-session check alone (primary-key probe)          : ${revokedCheck.toFixed(0)} µs`);
  console.log(`organization lookup alone                                : ${orgLookup.toFixed(0)} µs`);
  console.log(`before issue 26: both, side by side                      : ${before.toFixed(0)} µs`);
  console.log(`now: user row + organization + sign-out, one query       : ${userCheck.toFixed(0)} µs (now/before ${(userCheck / before).toFixed(2)}x)`);
  console.log(`cookie to principal (decrypt the cookie, the one query)  : ${whole.toFixed(0)} µs`);
  await db.system.query("DELETE FROM quarry_revoked_sessions WHERE session_id LIKE 'bench-%'");
}
