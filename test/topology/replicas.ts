import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import pg from "pg";
import { TEST_DB_PREFIX, baseDatabase, createDatabase, databaseUrl, dropDatabase } from "../pg-test-db";

/** Helpers of the topology tests: fresh databases and app replicas as separate processes. */
export const onPostgres = process.env.QUARRY_TEST_ENGINE === "postgres";

/** A new, empty database (only the vector extension, copied from the server's base database). */
export async function freshDatabase(): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `${TEST_DB_PREFIX}${crypto.randomBytes(6).toString("hex")}_fresh`;
  await createDatabase(name, baseDatabase());
  return { name, url: databaseUrl(name), drop: () => dropDatabase(name) };
}

export async function querySql<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export interface ReplicaCallOptions {
  token?: string;
  body?: unknown;
  params?: Record<string, string>;
  headers?: Record<string, string>
}

export interface Replica {
  port: number;
  process: ChildProcess;
  output: () => string;
  /** Without `url`, the handler's own endpoint path with `params` filled in. */
  call(module: string, method: string, url?: string | ReplicaCallOptions, options?: ReplicaCallOptions): Promise<{ status: number; json: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary response shapes
  stop(): Promise<void>;
}

/**
 * Starts `node --import tsx <script>` and resolves once it prints `ready` (`READY <port>` by default);
 * rejects if it exits first. tsx is a loader in the one process, not its CLI: the CLI runs the
 * script in a grandchild, which a SIGKILL of the child never reaches (it went on running, orphaned),
 * and whose end the child's `exit` event does not wait for.
 */
export function startProcess(script: string, env: Record<string, string>, timeoutMs = 180_000, ready = /READY (\d+)/): Promise<Replica> {
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=react-server", script], {
    env: { ...process.env, QUARRY_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start in ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(replica(Number(match[1] ?? 0), child, () => output));
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code ?? signal}) before it was ready:\n${output}`));
    });
  });
}

function replica(port: number, child: ChildProcess, output: () => string): Replica {
  return {
    port,
    process: child,
    output,
    async call(module, method, url, options = {}) {
      if (typeof url === "object") [url, options] = [undefined, url];
      const res = await fetch(`http://127.0.0.1:${port}/call`, { method: "POST", body: JSON.stringify({ module, method, url, ...options }) });
      const text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = text;
      }
      return { status: res.status, json };
    },
    stop: () => stopProcess(child),
  };
}

/** Sends `signal` and resolves once the process has exited (its `exit` event: the process is gone). */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}
