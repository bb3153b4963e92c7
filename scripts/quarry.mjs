#!/usr/bin/env node
// The package bin `quarry`: plain Node, which loads scripts/quarry.ts through tsx (a dependency of the package).
// tsx is pointed at this package's tsconfig (its `@/` paths), so the bin works from any working directory.
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

register({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) });
await import("./quarry.ts");
