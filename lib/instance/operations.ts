import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "./contract";
import * as organizations from "./organizations";

export const listInstanceOrganizations = defineOperation(contract.listInstanceOrganizations, ({ principal, query }) => organizations.listOrganizations(principal, query));

export const createInstanceOrganization = defineOperation(contract.createInstanceOrganization, ({ principal, body }) => organizations.createOrganization(principal, body));
