#!/usr/bin/env node
// The package bin `quarry`: plain Node, which loads scripts/quarry.ts through tsx (a dependency of the package).
// tsx is pointed at this package's tsconfig (its `@/` paths), so the bin works from any working directory.
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

const tsconfig = fileURLToPath(new URL("../tsconfig.json", import.meta.url));
const SERVER_COMMANDS = { init: "./quarry-init.ts", "instance-admin": "./quarry-instance-admin.ts" };
if (Object.hasOwn(SERVER_COMMANDS, process.argv[2])) {
  // These open the database as the server does (scripts/quarry-init.ts): server modules need the react-server condition.
  const { spawnSync } = await import("node:child_process");
  const script = fileURLToPath(new URL(SERVER_COMMANDS[process.argv[2]], import.meta.url));
  const run = spawnSync(process.execPath, ["--conditions=react-server", "--import", "tsx", script, ...process.argv.slice(3)], {
    stdio: "inherit",
    env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
  });
  process.exit(run.status ?? 1);
}
register({ tsconfig });
await import("./quarry.ts");
