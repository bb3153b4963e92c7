import "server-only";
import { processSingleton } from "@/lib/process-singleton";
import { loadConfig, type Config } from "./schema";

/** The configuration, parsed once per process from the environment (a change needs a restart). */
export const configSingleton = processSingleton<Config>("config", () => loadConfig(process.env));

export const config = (): Config => configSingleton.get();
