#!/usr/bin/env node
// The package bin `quarry`: plain Node, which loads scripts/quarry.ts through tsx (a dependency of the package).
import { register } from "tsx/esm/api";

register();
await import("./quarry.ts");
