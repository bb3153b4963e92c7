import "server-only";
import { loadConfig, type Config } from "./schema";

const holder = globalThis as unknown as { __quarryConfig?: Config };

/** The configuration, parsed once per process from the environment (a change needs a restart). */
export function config(): Config {
  holder.__quarryConfig ??= loadConfig(process.env);
  return holder.__quarryConfig;
}
