"use client";

import { createContext, useContext } from "react";
import { readerTimeZone } from "@/lib/dashboards/format";

/**
 * The signed-in organization's time zone, given once by the root layout: every time a page shows is printed in it,
 * the zone named (lib/dashboards/format.ts formatInstant), so two members in different zones read the same text.
 */
const OrgTimeZone = createContext<string | null>(null);

/** `timeZone` null: nobody signed in, times read in the reader's own zone. */
export function OrgTimeZoneProvider({ timeZone, children }: { timeZone: string | null; children: React.ReactNode }) {
  return <OrgTimeZone.Provider value={timeZone}>{children}</OrgTimeZone.Provider>;
}

/** The organization's zone; the reader's own outside a signed-in page (it is named either way). */
export function useOrgTimeZone(): string {
  return useContext(OrgTimeZone) ?? readerTimeZone();
}
