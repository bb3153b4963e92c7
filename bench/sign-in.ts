// `npm run bench -- sign-in [attempts]`: failed sign-ins through the real sign-in path (what
// POST /api/auth/callback/credentials runs: the sign-in gate's origin check and throttle look-up,
// then the credentials provider's authorize: user look-up, one scrypt, failure record), for a
// known email with a wrong password and for an unknown email, alternated. Prints p50/p95 of each and their ratio (aim ~1.0: the answer time must not tell
// whether an account exists), and the event loop's delay during the attempts (scrypt runs on the
// libuv pool) beside the delay while the same scrypt runs synchronously, as it did before.
// Embedded default on a freshly seeded temporary data folder.
import crypto from "node:crypto";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { require as tsxRequire } from "tsx/cjs/api";
import { PEER_HEADER, PEER_KEY_HEADER } from "@/lib/security/client-address";
import { signInGate } from "@/lib/api/sign-in-gate";
import { resetSignInThrottle } from "@/lib/auth/throttle";
import { withSeededDb } from "./lib/seeded-db";

type Authorize = (credentials: Record<string, string>, req: { headers: Record<string, string> }) => Promise<unknown>;
/**
 * What POST /api/auth/callback/credentials runs, minus next-auth's own request handling (its
 * handler needs Next's request scope for cookies(), which only a running Next server has): the
 * route's gate (origin check, throttle look-up), then the credentials provider's authorize (user
 * look-up, one scrypt, failure record), the function next-auth calls.
 *
 * lib/auth/session.ts is loaded as CommonJS: next-auth's providers are CommonJS modules with
 * `exports.default`, which Next's bundler and vitest unwrap but Node's ESM import (tsx runs the
 * benches as ESM) does not, so `CredentialsProvider(…)` would not be a function. Through tsx's
 * CommonJS loader the same source gets the usual interop. (The database and configuration live on
 * globalThis, so this copy of the modules shares them with the bench's own.)
 */
function signInPath(): { authorize: Authorize } {
  const session = tsxRequire(path.join(process.cwd(), "lib/auth/session.ts"), import.meta.url) as typeof import("@/lib/auth/session");
  const provider = session.authOptions().providers[0] as unknown as { options: { authorize: Authorize } };
  return { authorize: provider.options.authorize };
}

const PEER_KEY = "bench-peer-key-0123456789abcdef";
const KNOWN = "analyst@acme.test";
const UNKNOWN = "nobody-here@acme.test";

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

/** One failed sign-in as the route makes it, from its own address; the throttle's counts are cleared first (outside the timing). */
async function attempt(authorize: Authorize, email: string, n: number): Promise<number> {
  await resetSignInThrottle();
  const address = `198.51.100.${(n % 250) + 1}`;
  const headers = { "content-type": "application/x-www-form-urlencoded", origin: "http://localhost:3000", [PEER_HEADER]: address, [PEER_KEY_HEADER]: PEER_KEY };
  const password = "not-the-password";
  const started = performance.now();
  const req = new Request("http://localhost:3000/api/auth/callback/credentials", {
    method: "POST",
    headers,
    body: new URLSearchParams({ email, password, csrfToken: "bench", json: "true" }).toString(),
  });
  const refused = await signInGate(req, ["callback", "credentials"]);
  if (refused) throw new Error(`the sign-in gate answered ${refused.status}`);
  const user = await authorize({ email, password }, { headers });
  const ms = performance.now() - started;
  if (user !== null) throw new Error(`sign-in ${email} did not fail`);
  return ms;
}

/** The event loop's delay (max and p99, ms) while `work` runs. */
async function loopDelay(work: () => Promise<unknown>): Promise<{ max: number; p99: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  try {
    await work();
  } finally {
    histogram.disable();
  }
  return { max: histogram.max / 1e6, p99: histogram.percentile(99) / 1e6 };
}

export default async function bench(args: string[]): Promise<void> {
  const attempts = Number(args[0] ?? 40);
  // The peer address is believed only with the server's per-process key (scripts/server.mjs sets it).
  (globalThis as Record<symbol, unknown>)[Symbol.for("quarry.peerKey")] = PEER_KEY;
  await withSeededDb("pglite", async () => {
    const { authorize } = signInPath();
    // Warm: modules, plans, the scrypt thread pool.
    for (let i = 0; i < 5; i++) {
      await attempt(authorize, KNOWN, i);
      await attempt(authorize, UNKNOWN, i);
    }
    const known: number[] = [];
    const unknown: number[] = [];
    const asyncDelay = await loopDelay(async () => {
      for (let i = 0; i < attempts; i++) {
        // Alternated, so drift on a shared machine falls on both alike.
        known.push(await attempt(authorize, KNOWN, 2 * i));
        unknown.push(await attempt(authorize, UNKNOWN, 2 * i + 1));
      }
    });
    // Baseline in the same run: the same scrypt (same parameters as a stored hash) run synchronously.
    const salt = crypto.randomBytes(16);
    const syncDelay = await loopDelay(async () => {
      for (let i = 0; i < 10; i++) {
        crypto.scryptSync("not-the-password", salt, 32);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    });

    const [k50, k95, u50, u95] = [percentile(known, 50), percentile(known, 95), percentile(unknown, 50), percentile(unknown, 95)];
    console.log(`failed sign-ins (sign-in gate + authorize, as POST /api/auth/callback/credentials), ${attempts} each (alternated), embedded default`);
    console.log(`  known email, wrong password  p50 ${k50.toFixed(1)} ms  p95 ${k95.toFixed(1)} ms`);
    console.log(`  unknown email                p50 ${u50.toFixed(1)} ms  p95 ${u95.toFixed(1)} ms`);
    console.log(`  ratio unknown/known          p50 x${(u50 / k50).toFixed(2)}  p95 x${(u95 / k95).toFixed(2)} (aim ~1.0; before the dummy hash: 11 ms vs 80 ms, x0.14)`);
    console.log(`event-loop delay during the attempts (async scrypt): max ${asyncDelay.max.toFixed(1)} ms, p99 ${asyncDelay.p99.toFixed(1)} ms`);
    console.log(`baseline, the same scrypt synchronously (scryptSync): max ${syncDelay.max.toFixed(1)} ms, p99 ${syncDelay.p99.toFixed(1)} ms`);
    console.log(`  ratio max async/sync x${(asyncDelay.max / syncDelay.max).toFixed(2)}`);
  });
}
