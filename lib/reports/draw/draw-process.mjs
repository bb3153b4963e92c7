// The draw process: lays out and writes reports (draw/job.ts) for the server, one job at a time,
// so that drawing options a manifest controls can never take the server down. resvg is native
// code, and a panic there aborts its whole process: a worker thread would take the server with
// it, a child process dies alone. The supervisor (draw/pool.ts) forks this file, kills it at the
// render's time limit or past its memory bound, and starts another when it dies.
//
// Plain JavaScript, loaded natively for the reason lib/db/engine-process.mjs is: the supervisor
// resolves this file from the working directory (turbopackIgnore), so no bundler touches it. The
// drawing code itself is TypeScript, loaded through tsx pointed at the app's tsconfig (its `@/`
// paths), so this process runs the very code the tests exercise, under vitest, tsx and
// `next start` alike (tsx is a dependency, as scripts/quarry.mjs and the extraction workers use).
//
// In:  { id, job: DrawJob }        (advanced serialization: Uint8Array and Date survive)
// Out: { ready: true } once loaded; then per job { id, ok: true, result: DrawResult } or { id, ok: false, message }
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

// The heavy libraries load natively first: through tsx's loader hooks ECharts' hundreds of modules
// took 6.7 s instead of 1.6 s on a busy machine, and every draw process pays its start once.
await Promise.all([import("echarts"), import("pdfkit"), import("svg-to-pdfkit"), import("@resvg/resvg-js")]);
register({ tsconfig: fileURLToPath(new URL("../../../tsconfig.json", import.meta.url)) });
const { drawReport } = await import("./job.ts");

// The server went away (exited, or killed this process's channel): nothing is left to draw for.
process.on("disconnect", () => process.exit(0));
process.on("message", async ({ id, job }) => {
  try {
    process.send({ id, ok: true, result: await drawReport(job) });
  } catch (error) {
    process.send({ id, ok: false, message: error instanceof Error ? error.message : String(error) });
  }
});
process.send({ ready: true });
