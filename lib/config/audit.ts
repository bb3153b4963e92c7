import "server-only";
import { z } from "zod";
import { ConfigError } from "./schema";
import { processSingleton } from "@/lib/process-singleton";

/** `QUARRY_AUDIT_RETENTION_DAYS`: how long audit rows are kept (lib/audit/retention.ts); a year unless said. */
const AuditEnv = z.object({
  QUARRY_AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(365),
});

export interface AuditConfig {
  retentionDays: number;
}

/** Parses the audit variables; throws ConfigError naming the variable. */
export function loadAuditConfig(env: Record<string, string | undefined>): AuditConfig {
  const raw = env.QUARRY_AUDIT_RETENTION_DAYS?.trim();
  const parsed = AuditEnv.safeParse({ QUARRY_AUDIT_RETENTION_DAYS: raw === "" ? undefined : raw });
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  return { retentionDays: parsed.data.QUARRY_AUDIT_RETENTION_DAYS };
}

const auditConfigSingleton = processSingleton("auditConfig", () => loadAuditConfig(process.env));

export const auditConfig = (): AuditConfig => auditConfigSingleton.get();
