import { describe, expect, it } from "vitest";
import { loadAuditConfig } from "./audit";
import { ConfigError } from "./schema";

describe("QUARRY_AUDIT_RETENTION_DAYS", () => {
  it("keeps a year unless said, and takes a number of days", () => {
    expect(loadAuditConfig({}).retentionDays).toBe(365);
    expect(loadAuditConfig({ QUARRY_AUDIT_RETENTION_DAYS: " " }).retentionDays).toBe(365);
    expect(loadAuditConfig({ QUARRY_AUDIT_RETENTION_DAYS: "90" }).retentionDays).toBe(90);
  });

  it("refuses what is not a whole number of days from 1, naming the variable", () => {
    for (const raw of ["0", "-5", "1.5", "forever", "36501"]) {
      expect(() => loadAuditConfig({ QUARRY_AUDIT_RETENTION_DAYS: raw }), raw).toThrow(ConfigError);
      expect(() => loadAuditConfig({ QUARRY_AUDIT_RETENTION_DAYS: raw }), raw).toThrow(/QUARRY_AUDIT_RETENTION_DAYS/);
    }
  });
});
