// npm run manifest -- validate <file...>   the same as `npm run quarry -- validate` (scripts/quarry-cli.ts)
// npm run manifest -- schemas [dir]         writes the JSON Schemas (default public/schemas)
import fs from "node:fs";
import path from "node:path";
import { JSON_SCHEMA_FILES } from "@/lib/manifest/json-schema";
import { runQuarry } from "./quarry-cli";

const [command, ...args] = process.argv.slice(2);

function writeSchemas(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, build] of Object.entries(JSON_SCHEMA_FILES)) {
    fs.writeFileSync(path.join(dir, name), `${JSON.stringify(build(), null, 2)}\n`);
    console.log(`wrote ${path.join(dir, name)}`);
  }
}

if (command === "validate" && args.length > 0) {
  process.exitCode = await runQuarry(["validate", "--no-color", ...args], { env: process.env, fetch, out: (t) => console.log(t), err: (t) => console.error(t), tty: false });
} else if (command === "schemas") {
  writeSchemas(args[0] ?? path.join(process.cwd(), "public", "schemas"));
} else {
  console.error("usage: npm run manifest -- validate <file...>\n       npm run manifest -- schemas [dir]");
  process.exit(2);
}
