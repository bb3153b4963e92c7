import "server-only";
import { defineOperation } from "@/lib/api/operation";
import * as contract from "./contract";
import { listLocationsFor } from "./locations";

export const listLocations = defineOperation(contract.listLocations, ({ principal }) => listLocationsFor(principal));
