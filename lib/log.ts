import { config } from "@/lib/config";

const LEVELS = { info: 0, warn: 1, error: 2, silent: 3 } as const;

/** JSON-lines logger on stderr; callers never pass secrets or tokens as fields. */
function write(level: "info" | "warn" | "error", message: string, fields: Record<string, unknown>) {
  if (LEVELS[level] < LEVELS[config().logLevel]) return;
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
}

export const log = {
  info: (message: string, fields: Record<string, unknown> = {}) => write("info", message, fields),
  warn: (message: string, fields: Record<string, unknown> = {}) => write("warn", message, fields),
  error: (message: string, fields: Record<string, unknown> = {}) => write("error", message, fields),
};
