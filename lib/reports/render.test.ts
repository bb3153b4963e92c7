import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "@/lib/auth/roles";
import { seedSampleDashboard } from "@/lib/dashboards/dashboards";
import { renderDashboardReport } from "./render";

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };

/** The text pdftotext (poppler) reads from a PDF, layout kept. */
function pdfText(bytes: Uint8Array): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "report-")), "r.pdf");
  fs.writeFileSync(file, bytes);
  return execFileSync("pdftotext", ["-layout", file, "-"], { encoding: "utf8" });
}

let dashboardId: string;
beforeAll(async () => {
  dashboardId = (await seedSampleDashboard(admin)).id;
});

describe("renderDashboardReport", () => {
  it("renders the sample dashboard as a PDF", async () => {
    const report = await renderDashboardReport(admin, { dashboardId, filters: {}, format: "pdf" });
    const text = pdfText(report.bytes);
    expect(report.contentType).toBe("application/pdf");
    expect(text).toContain("Sales overview");
    expect(text).toContain("Revenue by location");
  });
  it("renders a tab as a PNG", async () => {
    const report = await renderDashboardReport(admin, { dashboardId, filters: {}, format: "png" });
    expect(report.contentType).toBe("image/png");
  });
});
