import "server-only";
import { insertRun, type ReportHooks } from "@/lib/notifications/pipeline/runtime";
import { latestDue } from "@/lib/notifications/settings/cron";
import { SendError } from "@/lib/notifications/transports/send";
import { REPORT_RUNS } from "./schedules";
import { unsubscribeLinks } from "./schedules-links";
import { ReportUnavailable, pruneReportFiles, reportAttachments, runReport } from "./schedules-run";

/** How scheduled reports ride the notification pipeline, handed to it by the worker (lib/worker.ts). */
export const reportHooks: ReportHooks = {
  async schedule(tx, orgId, now, strandedWindow) {
    const due: string[] = [];
    for (const schedule of await tx.reportSchedule.findMany({ where: { paused: false } })) {
      // The cron is read in the schedule's own time zone; missed occurrences collapse into the latest.
      const occurrence = latestDue(schedule.cron, now, schedule.lastScheduledFor ?? schedule.createdAt, schedule.timeZone);
      if (!occurrence) continue;
      const id = await insertRun(tx, REPORT_RUNS, orgId, schedule.id, occurrence, "cron");
      await tx.reportSchedule.update({ where: { id: schedule.id }, data: { lastScheduledFor: occurrence } });
      if (id) due.push(id);
    }
    await pruneReportFiles(tx, now);
    const stranded = await tx.reportRun.findMany({ where: { status: "queued", createdAt: strandedWindow }, select: { id: true } });
    return { due, stranded: stranded.map((r) => r.id) };
  },

  run: runReport,

  async message(rt, delivery, sentAt) {
    try {
      const report = await reportAttachments(rt, delivery);
      const unsubscribe = delivery.channel === "email" ? await unsubscribeLinks(delivery.orgId, report.scheduleId, delivery.recipient, sentAt) : undefined;
      return { ...report, unsubscribe };
    } catch (error) {
      if (error instanceof ReportUnavailable) throw new SendError(error.message, !error.permanent);
      throw error;
    }
  },
};
