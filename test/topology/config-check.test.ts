import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { configurationProblems } from "@/lib/config/validate";

// Issue 32 §2: with DOCUMENT_STORAGE_CONFIG={"provider":"s3"} the server printed that it was listening, then the
// error, then answered 500 forever. Every variable is now checked before the port is bound.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-config-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** Each kind of configuration lib/config reads, with one invalid value and what the message must name. */
const INVALID: Array<[string, Record<string, string>, RegExp]> = [
  ["a number", { PORT: "eighty" }, /PORT: Invalid input: expected number/],
  ["a secret", { QUARRY_SECRET: "short" }, /\n {2}QUARRY_SECRET must be at least 32 characters/],
  ["a URL", { QUARRY_PUBLIC_URL: "not a url" }, /QUARRY_PUBLIC_URL: Invalid URL/],
  ["a proxy list", { QUARRY_TRUSTED_PROXIES: "10.0.0.0/99" }, /\n {2}QUARRY_TRUSTED_PROXIES: '10\.0\.0\.0\/99' has an invalid prefix length/],
  ["document storage", { DOCUMENT_STORAGE_CONFIG: '{"provider":"s3"}' }, /DOCUMENT_STORAGE_CONFIG\.bucket: Invalid input: expected string/],
  ["document limits", { DOCUMENT_MAX_BYTES: "lots" }, /DOCUMENT_MAX_BYTES: /],
  ["extraction", { DOCUMENT_EXTRACT_TIMEOUT_MS: "-1" }, /DOCUMENT_EXTRACT_TIMEOUT_MS: /],
  ["embeddings", { EMBEDDING_PROVIDER_CONFIG: '{"default_provider":"cohere"}' }, /EMBEDDING_PROVIDER_CONFIG\.default_provider: /],
  ["chat", { CHAT_MODEL_CONFIG: '{"base_url":"https://api.openai.com/v1","model":"m","temprature":1}' }, /CHAT_MODEL_CONFIG\.\(root\): Unrecognized key: "temprature"/],
  ["notifications", { NOTIFICATIONS_CONFIG: '{"max_attempts":0}' }, /NOTIFICATIONS_CONFIG\.max_attempts: /],
  ["JSON", { NOTIFICATIONS_CONFIG: "{max_attempts: 3}" }, /NOTIFICATIONS_CONFIG is not valid JSON/],
];

function startServer(env: Record<string, string>, dataDir: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["scripts/server.mjs"], {
    cwd: process.cwd(),
    env: { ...process.env, QUARRY_LOG_LEVEL: "warn", DATABASE_URL: "", PORT: "0", QUARRY_DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

describe("configuration is checked before the server listens", () => {
  it("finds nothing wrong with the defaults", () => {
    expect(configurationProblems({})).toEqual([]);
  });

  it("names every invalid variable at once, with its field", () => {
    const problems = configurationProblems(Object.assign({}, ...INVALID.map(([, env]) => env)));
    // The last NOTIFICATIONS_CONFIG (not JSON) replaces the one before it.
    for (const [, , pattern] of INVALID.filter(([kind]) => kind !== "notifications")) expect(`\n  ${problems.join("\n  ")}`).toMatch(pattern);
  });

  it.each(INVALID)("scripts/server.mjs, invalid %s: exits 1 naming it, before listening or touching QUARRY_DATA_DIR", async (_kind, env, pattern) => {
    const dataDir = path.join(root, `data-${Object.keys(env)[0]}`);
    const { code, output } = await startServer(env, dataDir);
    expect(code).toBe(1);
    expect(output).toContain("Quarry cannot start: invalid configuration (nothing was started)");
    expect(output).toMatch(pattern);
    expect(output).not.toMatch(/Quarry is ready|cannot listen/);
    expect(fs.existsSync(dataDir)).toBe(false);
  });
});
