import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

/**
 * Builds one migrated and seeded PGlite data directory for the whole run (or
 * reuses it while migrations and seed are unchanged); each test file then
 * works on its own copy (test/setup-file.ts).
 */
export default function setup() {
  const root = process.cwd();
  const hash = crypto.createHash("sha256");
  for (const file of [...listFiles(path.join(root, "prisma/migrations")), path.join(root, "lib/db/seed.ts")].sort()) {
    hash.update(file).update(fs.readFileSync(file));
  }
  const template = path.join(root, ".data", "test-template", hash.digest("hex").slice(0, 16));
  if (!fs.existsSync(path.join(template, "ready"))) {
    fs.rmSync(path.dirname(template), { recursive: true, force: true });
    fs.mkdirSync(template, { recursive: true });
    execFileSync(process.execPath, ["node_modules/tsx/dist/cli.mjs", "--conditions=react-server", "scripts/db-seed.ts"], {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, QUARRY_DATA_DIR: template, QUARRY_LOG_LEVEL: "warn", DATABASE_URL: "" },
    });
    fs.writeFileSync(path.join(template, "ready"), new Date().toISOString());
  }
  process.env.QUARRY_TEST_TEMPLATE = template;
}

function listFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}
