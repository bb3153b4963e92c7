import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "./contract";
import * as locations from "./locations";

export const listLocations = defineOperation(contract.listLocations, ({ principal, query }) => locations.listLocations(principal, query));

export const createLocation = defineOperation(contract.createLocation, ({ principal, body }) => locations.createLocation(principal, body));

export const updateLocation = defineOperation(contract.updateLocation, ({ principal, params, body }) => locations.updateLocation(principal, params.id, body));
