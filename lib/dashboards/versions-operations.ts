import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "./versions-contract";
import * as versions from "./versions";

export const listVersions = defineOperation(contract.listVersions, ({ principal, params, query }) => versions.listVersions(principal, params.id, query));

export const getVersion = defineOperation(contract.getVersion, ({ principal, params }) => versions.getVersion(principal, params.id, params.version));

export const diffVersions = defineOperation(contract.diffVersions, ({ principal, params, query }) => versions.diffVersions(principal, params.id, params.version, query.to));

export const restoreVersion = defineOperation(contract.restoreVersion, ({ principal, params, body }) => versions.restoreVersion(principal, params.id, params.version, body));
