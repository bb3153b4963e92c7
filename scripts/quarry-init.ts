// `npm run quarry -- init --org <slug> --admin <email>` (issue 43 §1): the instance admin's command, run where the
// server's configuration is (DATABASE_URL, or QUARRY_DATA_DIR for the embedded engine). It makes an organization and
// prints a one-time link for its first admin to choose a name and password. On an empty install it also closes the
// setup page; on one with organizations it makes another. Options: --name <organization name>, --time-zone <IANA>,
// --currency <ISO 4217>. Exit codes: 0 done, 1 invalid input or an organization that already has members, 2 configuration.
// Run with the react-server condition (scripts/quarry.mjs starts it so): it opens the database as the server does.
import { parseArgs } from "node:util";
import { config } from "@/lib/config";
import { ConfigError } from "@/lib/config/schema";
import { closeDb } from "@/lib/db/client";
import { probeDataDirLock } from "@/lib/db/data-dir-lock.mjs";
import { DomainError } from "@/lib/errors";
import { SetupBody } from "@/lib/members/contract";
import { INVITATION_DAYS } from "@/lib/members/invitations";
import { initOrganization } from "@/lib/members/setup";

const USAGE = "usage: quarry init --org <slug> --admin <email> [--name <organization name>] [--time-zone <IANA zone>] [--currency <ISO 4217>]";

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

let values;
try {
  ({ values } = parseArgs({
    args: process.argv.slice(2),
    options: { org: { type: "string" }, admin: { type: "string" }, name: { type: "string" }, "time-zone": { type: "string", default: "UTC" }, currency: { type: "string", default: "USD" } },
  }));
} catch (error) {
  fail(`${(error as Error).message}\n${USAGE}`);
}
if (!values.org || !values.admin) fail(USAGE);

// The same rules as the setup page's form (lib/members/contract.ts).
const input = SetupBody.pick({ slug: true, organization_name: true, time_zone: true, currency: true, admin_email: true }).safeParse({
  slug: values.org,
  organization_name: values.name ?? values.org,
  time_zone: values["time-zone"],
  currency: values.currency,
  admin_email: values.admin,
});
if (!input.success) fail(input.error.issues.map((i) => `--${String(i.path[0]).replace("organization_name", "name").replace("admin_email", "admin").replace("time_zone", "time-zone").replace("slug", "org")}: ${i.message}`).join("\n"));

let cfg;
try {
  cfg = config();
} catch (error) {
  fail(error instanceof ConfigError ? error.message : String(error), 2);
}
if (cfg.database.kind === "pglite" && (await probeDataDirLock(cfg.dataDir)).state === "alive") {
  fail(`The server is running on the embedded database in ${cfg.dataDir}, which one process opens at a time. Stop it and run this again, or open ${cfg.publicUrl}/setup on an empty install.`, 2);
}

try {
  const made = await initOrganization({ slug: input.data.slug, name: input.data.organization_name, timeZone: input.data.time_zone, currency: input.data.currency, adminEmail: input.data.admin_email }, "command: quarry init");
  console.log(made.created ? `Made organization '${input.data.slug}'.` : `Organization '${input.data.slug}' has no member yet: a new link replaces the last one.`);
  console.log(`Send this link to ${input.data.admin_email}; it works once, for ${INVITATION_DAYS} days:`);
  console.log(made.link);
} catch (error) {
  if (error instanceof DomainError) fail(error.message);
  throw error;
} finally {
  await closeDb();
}
