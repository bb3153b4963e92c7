"use client";

import { useApiRead } from "@/components/api-hooks";
import { listReportSchedules } from "@/lib/reports/schedules-contract";
import type { ResponseOf } from "@/components/api-client";
import { ReportSchedulesTable } from "./report-schedules-table";

interface Props {
  initial: ResponseOf<typeof listReportSchedules>;
  listPage: { limit: number; offset: number };
  canApprove: boolean;
}

/** Every report schedule the editor may see, with last and next run, kept fresh while the page is open. */
export function ReportSchedulesAdmin({ initial, listPage, canApprove }: Props) {
  const list = useApiRead(listReportSchedules, { query: listPage }, { fallbackData: initial, refreshInterval: 30_000 });
  const data = list.data ?? initial;
  return (
    <>
      <ReportSchedulesTable schedules={data.items} canApprove={canApprove} showDashboard onChanged={() => void list.mutate()} />
      {data.total > data.items.length && (
        <p className="muted">
          Showing the newest {data.items.length} of {data.total} schedules.
        </p>
      )}
    </>
  );
}
