import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "./contract";
import * as locations from "./locations";

export const listLocations = defineOperation(contract.listLocations, ({ principal, query }) => locations.listLocations(principal, query));
