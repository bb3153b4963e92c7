import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { isEditor } from "@/lib/dashboards/policy";
import { invoke } from "@/lib/operation";
import { PAGE_LIMIT_MAX } from "@/lib/pagination";
import { listReportSchedules } from "@/lib/reports/schedules-operations";
import { ReportSchedulesAdmin } from "@/components/reports/report-schedules-admin";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Scheduled reports" };

const LIST_PAGE = { limit: PAGE_LIMIT_MAX, offset: 0 };

export default async function ReportSchedulesPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  if (!isEditor(principal)) {
    return (
      <div className="page">
        <h1>Scheduled reports</h1>
        <div className="error-box" role="alert">
          <strong>Editors only.</strong> Admins and general managers schedule dashboard reports; you are signed in as {principal.role.replace("_", " ")}.
        </div>
      </div>
    );
  }
  const schedules = await invoke(listReportSchedules, principal, { query: LIST_PAGE });
  return (
    <div className="page">
      <h1>Scheduled reports</h1>
      <p className="muted">
        Dashboards delivered by e-mail, Slack and webhooks on a schedule. Each colleague receives the report in their own role and locations; other addresses, Slack
        and webhooks receive the schedule&apos;s shared scope only once an admin approves it. Create a schedule from a dashboard&apos;s &quot;Schedule report&quot;.
        Each delivery&apos;s fate is in the notifications&apos; delivery health.
      </p>
      <ReportSchedulesAdmin initial={schedules} listPage={LIST_PAGE} canApprove={principal.role === "admin"} />
    </div>
  );
}
