// `npm run quarry -- instance-admin grant|revoke <email>` and `… instance-admin list` (issue 43 §1): the only way to
// make someone an instance admin, who makes organizations from /instance/organizations. Run by the operator where
// the server's configuration is (DATABASE_URL, or QUARRY_DATA_DIR for the embedded engine), as `quarry init` is: no
// organization's admin can grant it (migration 0053). Exit codes: 0 done, 1 usage or unknown account, 2 configuration.
// Run with the react-server condition (scripts/quarry.mjs starts it so): it opens the database as the server does.
import { config } from "@/lib/config";
import { ConfigError } from "@/lib/config/schema";
import { closeDb } from "@/lib/db/client";
import { probeDataDirLock } from "@/lib/db/data-dir-lock.mjs";
import { DomainError } from "@/lib/errors";
import { grantInstanceAdmin, listInstanceAdmins, revokeInstanceAdmin } from "@/lib/instance/admins";

const USAGE = "usage: quarry instance-admin grant <email> | revoke <email> | list";

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

const [action, email, ...rest] = process.argv.slice(2);
if (rest.length > 0 || !(((action === "grant" || action === "revoke") && email) || (action === "list" && !email))) fail(USAGE);

let cfg;
try {
  cfg = config();
} catch (error) {
  fail(error instanceof ConfigError ? error.message : String(error), 2);
}
if (cfg.database.kind === "pglite" && (await probeDataDirLock(cfg.dataDir)).state === "alive") {
  fail(`The server is running on the embedded database in ${cfg.dataDir}, which one process opens at a time. Stop it and run this again.`, 2);
}

try {
  if (action === "grant") {
    await grantInstanceAdmin(email);
    console.log(`${email} is an instance admin: ${cfg.publicUrl}/instance/organizations`);
  } else if (action === "revoke") {
    console.log((await revokeInstanceAdmin(email)) ? `${email} is no longer an instance admin.` : `${email} was not an instance admin.`);
  } else {
    const admins = await listInstanceAdmins();
    if (admins.length === 0) console.log("No instance admins.");
    for (const a of admins) console.log(`${a.email}\t${a.organization}\tsince ${a.grantedAt.toISOString()}`);
  }
} catch (error) {
  if (error instanceof DomainError) fail(error.message);
  throw error;
} finally {
  await closeDb();
}
