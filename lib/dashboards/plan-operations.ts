import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "./plan-contract";
import * as plan from "./plan";

export const planDashboards = defineOperation(contract.planDashboards, ({ principal, body }) => plan.planDashboards(principal, body));

export const applyDashboards = defineOperation(contract.applyDashboards, ({ principal, body }) => plan.applyDashboards(principal, body));
