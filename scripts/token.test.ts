import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { exportJWK, generateKeyPair } from "jose";
import { afterAll, describe, expect, it } from "vitest";
import { principalFromBearer } from "@/lib/auth/bearer";
import { issuerKeyFile, localIssuerKey } from "@/lib/auth/local-issuer";
import { config } from "@/lib/config";

// Issue 32 §1: the README's token command made tokens the server refused (401 "Token signature is invalid") when the
// server ran with QUARRY_DATA_DIR, and quietly created .data/issuer-key.json in the clone.

const folders: string[] = [];
afterAll(() => {
  for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true });
});
const tempFolder = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-token-"));
  folders.push(dir);
  return dir;
};

function token(env: Record<string, string>, args: string[] = ["--org", "acme", "--role", "admin"]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", "scripts/token.ts", ...args], {
    cwd: process.cwd(),
    env: { ...process.env, AUTH_JWKS_URL: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

describe("npm run token", () => {
  it("signs with the key the server made in its QUARRY_DATA_DIR, and the server accepts the token", async () => {
    await localIssuerKey(); // as lib/boot.ts does at start
    const { dataDir } = config();
    const run = await token({ QUARRY_DATA_DIR: dataDir });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`signed with ${issuerKeyFile(dataDir)}`);
    const principal = await principalFromBearer(run.stdout.trim().split("\n").at(-1)!);
    expect(principal).toMatchObject({ role: "admin", userId: "usr_acme_admin" });
  });

  it("a token signed with another folder's key gets a 401 that says so", async () => {
    const other = tempFolder();
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    fs.writeFileSync(issuerKeyFile(other), JSON.stringify({ ...(await exportJWK(privateKey)), kid: "local-other", alg: "ES256" }));
    const run = await token({ QUARRY_DATA_DIR: other });
    expect(run.code).toBe(0);
    await expect(principalFromBearer(run.stdout.trim())).rejects.toThrow(
      "Token signature is invalid: it was signed by another local issuer key (kid 'local-other'); run npm run token with the QUARRY_DATA_DIR this server uses",
    );
  });

  it("refuses a folder no server has used, naming it and the command for another folder, and creates nothing", async () => {
    const dir = path.join(tempFolder(), "data");
    const run = await token({ QUARRY_DATA_DIR: dir });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`No Quarry server has used QUARRY_DATA_DIR ${dir}`);
    expect(run.stderr).toContain("QUARRY_DATA_DIR=/path/to/the/server/data npm run -s token -- --org acme --role admin");
    expect(fs.existsSync(dir)).toBe(false);
  });

  it("refuses to make a key beside a database whose server has not made one yet", async () => {
    const dir = tempFolder();
    fs.mkdirSync(path.join(dir, "pglite"));
    const run = await token({ QUARRY_DATA_DIR: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`No issuer key in QUARRY_DATA_DIR ${dir} yet: the server creates issuer-key.json as it starts`);
    expect(fs.readdirSync(dir)).toEqual(["pglite"]);
  });

  it("refuses when the server verifies tokens from an identity provider, and names invalid configuration", async () => {
    const jwks = await token({ QUARRY_DATA_DIR: tempFolder(), AUTH_JWKS_URL: "https://idp.example/jwks.json" });
    expect(jwks.code).toBe(2);
    expect(jwks.stderr).toContain("AUTH_JWKS_URL is set");
    const invalid = await token({ QUARRY_DATA_DIR: tempFolder(), PORT: "eighty" });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain("PORT: Invalid input");
  });
});
