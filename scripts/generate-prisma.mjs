// `prisma generate` never runs the schema engine, but the CLI insists on one
// being present and would download it; point it at any existing file instead.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const env = { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? fileURLToPath(import.meta.url), PRISMA_HIDE_UPDATE_MESSAGE: "1" };
execFileSync(process.execPath, ["node_modules/prisma/build/index.js", "generate"], { stdio: "inherit", env });
