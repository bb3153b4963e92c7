// Prints a bearer token from the embedded issuer, alone on the last line.
// usage: npm run token -- --org acme --role admin [--user <id|email>] [--locations id,id] [--ttl 3600]
import { parseArgs } from "node:util";
import { z } from "zod";
import { issueLocalToken } from "@/lib/auth/local-issuer";
import { Role } from "@/lib/auth/roles";

const { values } = parseArgs({
  options: {
    org: { type: "string", default: "acme" },
    role: { type: "string", default: "admin" },
    user: { type: "string" },
    locations: { type: "string" },
    ttl: { type: "string", default: "3600" },
  },
});

const role = Role.safeParse(values.role);
const ttl = z.coerce.number().int().positive().safeParse(values.ttl);
if (!role.success || !ttl.success) {
  console.error(`--role must be one of ${Role.options.join(", ")} and --ttl a positive number of seconds`);
  process.exit(2);
}
// The database is not opened here: the embedded PGlite belongs to the running server.
// A token for an organization that does not exist is refused by the API (401).
const orgSlug = values.org!;
const locationIds = values.locations ? values.locations.split(",").map((s) => s.trim()).filter(Boolean) : null;
const token = await issueLocalToken({
  userId: values.user ?? `usr_${orgSlug}_${role.data}`,
  orgSlug,
  role: role.data,
  locationIds,
  ttlSeconds: ttl.data,
});
console.error(`# ${role.data} of ${orgSlug}${locationIds ? `, locations ${locationIds.join(", ")}` : ""}, valid ${ttl.data} s`);
console.log(token);
