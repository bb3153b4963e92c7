import "server-only";
import { defineOperation } from "@/lib/operation";
import { defaultRuntime } from "@/lib/notifications/pipeline/runtime";
import * as contract from "./schedules-contract";
import * as emailGroups from "./email-groups";
import * as links from "./schedules-links";
import * as schedules from "./schedules";

export const createReportSchedule = defineOperation(contract.createReportSchedule, ({ principal, body }) => schedules.createReportSchedule(principal, body, new Date()));

export const listReportSchedules = defineOperation(contract.listReportSchedules, ({ principal, query }) => schedules.listReportSchedules(principal, query, new Date()));

export const getReportSchedule = defineOperation(contract.getReportSchedule, ({ principal, params }) => schedules.getReportSchedule(principal, params.id, new Date()));

export const updateReportSchedule = defineOperation(contract.updateReportSchedule, ({ principal, params, body }) => schedules.updateReportSchedule(principal, params.id, body, new Date()));

export const deleteReportSchedule = defineOperation(contract.deleteReportSchedule, ({ principal, params }) => schedules.deleteReportSchedule(principal, params.id));

export const sendReportSchedule = defineOperation(contract.sendReportSchedule, async ({ principal, params }) => schedules.sendReportNow(principal, params.id, await defaultRuntime()));

export const downloadReportFile = defineOperation(contract.downloadReportFile, ({ params }) => links.openReportFile(params.token));

export const unsubscribeReport = defineOperation(contract.unsubscribeReport, ({ params }) => links.unsubscribe(params.token));

export const listReportEmailGroups = defineOperation(contract.listReportEmailGroups, ({ principal, query }) => emailGroups.listReportEmailGroups(principal, query));
