// Prints a bearer token from the embedded issuer, alone on the last line.
// usage: npm run token -- --org acme --role admin [--user <id|email>] [--locations id,id] [--ttl 3600]
// It reads the configuration the server reads (lib/config: QUARRY_DATA_DIR, default .data in the project folder,
// AUTH_*), and signs with the key the server created in that folder; it never creates a key of its own, which the
// server would not know (issue 32).
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { issueLocalToken, issuerKeyFile, readIssuerKey } from "@/lib/auth/local-issuer";
import { Role } from "@/lib/access/roles";
import { config } from "@/lib/config";
import { ConfigError } from "@/lib/config/schema";
import { probeDataDirLock } from "@/lib/db/data-dir-lock.mjs";

const { values } = parseArgs({
  options: {
    org: { type: "string", default: "acme" },
    role: { type: "string", default: "admin" },
    user: { type: "string" },
    locations: { type: "string" },
    ttl: { type: "string", default: "3600" },
  },
});

const fail = (message: string): never => {
  console.error(message);
  process.exit(2);
};

const role = Role.safeParse(values.role);
const ttl = z.coerce.number().int().positive().safeParse(values.ttl);
if (!role.success || !ttl.success) fail(`--role must be one of ${Role.options.join(", ")} and --ttl a positive number of seconds`);

let cfg: ReturnType<typeof config>;
try {
  cfg = config();
} catch (error) {
  cfg = fail(error instanceof ConfigError ? error.message : String(error));
}
if (cfg.auth.jwksUrl) {
  fail(`AUTH_JWKS_URL is set: the server verifies tokens from your identity provider (${cfg.auth.jwksUrl}), not from the embedded issuer. Get a token from that provider.`);
}

const keyFile = issuerKeyFile(cfg.dataDir);
if (!fs.existsSync(keyFile)) {
  const running = fs.existsSync(cfg.dataDir) && (await probeDataDirLock(cfg.dataDir)).state === "alive";
  const used = running || fs.existsSync(path.join(cfg.dataDir, "pglite"));
  const example = `QUARRY_DATA_DIR=/path/to/the/server/data npm run -s token -- --org ${values.org} --role ${values.role}`;
  fail(
    used
      ? `No issuer key in QUARRY_DATA_DIR ${cfg.dataDir} yet: the server creates ${path.basename(keyFile)} as it starts. Wait until it prints "Quarry is ready", then run this again. Nothing was created.`
      : `No Quarry server has used QUARRY_DATA_DIR ${cfg.dataDir} (no database, no issuer key there), so a token signed here would be refused. ` +
          `Start the server first (npm start), or give this command the data folder the server was started with:\n  ${example}\nNothing was created.`,
  );
}

// The database is not opened here: the embedded PGlite belongs to the running server.
// A token for an organization that does not exist is refused by the API (401).
const orgSlug = values.org!;
const locationIds = values.locations ? values.locations.split(",").map((s) => s.trim()).filter(Boolean) : null;
const token = await issueLocalToken(
  // --user takes a member's id or e-mail; the server refuses a token that names no active member of the organization.
  { userId: values.user ?? `usr_${orgSlug}_${role.data}`, email: values.user?.includes("@") ? values.user : undefined, orgSlug, role: role.data!, locationIds, ttlSeconds: ttl.data },
  await readIssuerKey(keyFile),
);
console.error(`# ${role.data} of ${orgSlug}${locationIds ? `, locations ${locationIds.join(", ")}` : ""}, valid ${ttl.data} s, signed with ${keyFile}`);
console.log(token);
