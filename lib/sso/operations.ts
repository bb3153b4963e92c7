import "server-only";
import { NotFound } from "@/lib/errors";
import { defineOperation } from "@/lib/operation";
import * as contract from "./contract";
import * as settings from "./settings";

export const getSsoSettings = defineOperation(contract.getSsoSettings, ({ principal }) => settings.getSsoSettings(principal));

export const saveSsoSettings = defineOperation(contract.saveSsoSettings, ({ principal, body }) => settings.saveSsoSettings(principal, body));

export const deleteSsoSettings = defineOperation(contract.deleteSsoSettings, ({ principal }) => settings.deleteSsoSettings(principal));

export const discoverSso = defineOperation(contract.discoverSso, async ({ body }) => {
  const found = await settings.discoverSso(body.email_or_organization);
  if (!found) throw new NotFound("No single sign-on is set up for that address or organization");
  return found;
});
