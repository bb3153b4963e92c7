// `npm run bench -- <name> [args...]` runs the default export of bench/<name>.ts.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [name, ...args] = process.argv.slice(2);
const available = fs.readdirSync(import.meta.dirname).filter((f) => f.endsWith(".ts") && f !== "run.ts").map((f) => f.replace(/\.ts$/, ""));
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <name>\navailable: ${available.join(", ") || "(none)"}`);
  process.exit(2);
}
process.env.QUARRY_LOG_LEVEL ??= "warn";
const bench = (await import(pathToFileURL(path.join(import.meta.dirname, `${name}.ts`)).href)) as { default: (args: string[]) => Promise<void> };
await bench.default(args);
