// npm run manifest -- validate <file...>   prints file:line:col messages, exits 1 on errors
// npm run manifest -- schemas [dir]         writes the JSON Schemas (default public/schemas)
import fs from "node:fs";
import path from "node:path";
import { formatManifestError } from "@/lib/manifest/errors";
import { JSON_SCHEMA_FILES } from "@/lib/manifest/json-schema";
import { parseDashboardYaml, parseWidgetYaml } from "@/lib/manifest/parse";

const [command, ...args] = process.argv.slice(2);

function validate(files: string[]): number {
  let failed = 0;
  for (const file of files) {
    const text = fs.readFileSync(file, "utf8");
    // A widget file starts with `kind: widget`; anything else is read as a dashboard.
    const isWidgetFile = /^kind:\s*widget\s*$/m.test(text) && !/^kind:\s*dashboard\s*$/m.test(text);
    const result = isWidgetFile ? parseWidgetYaml(text) : parseDashboardYaml(text);
    if (result.ok) {
      console.log(`${file}: ok`);
      continue;
    }
    failed++;
    for (const error of result.errors) console.log(formatManifestError(error, file));
  }
  return failed;
}

function writeSchemas(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, build] of Object.entries(JSON_SCHEMA_FILES)) {
    fs.writeFileSync(path.join(dir, name), `${JSON.stringify(build(), null, 2)}\n`);
    console.log(`wrote ${path.join(dir, name)}`);
  }
}

if (command === "validate" && args.length > 0) {
  process.exit(validate(args) > 0 ? 1 : 0);
} else if (command === "schemas") {
  writeSchemas(args[0] ?? path.join(process.cwd(), "public", "schemas"));
} else {
  console.error("usage: npm run manifest -- validate <file...>\n       npm run manifest -- schemas [dir]");
  process.exit(2);
}
