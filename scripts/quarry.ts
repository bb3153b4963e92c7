// npm run quarry -- <command> … (also the package bin, scripts/quarry.mjs): see scripts/quarry-cli.ts.
import { runQuarry } from "./quarry-cli";

process.exitCode = await runQuarry(process.argv.slice(2), {
  env: process.env,
  fetch,
  out: (text) => console.log(text),
  err: (text) => console.error(text),
  tty: process.stdout.isTTY === true || (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== "0"),
});
