import { useOrgTimeZone } from "@/components/org-time-zone";
import { formatInstant } from "@/lib/dashboards/format";

/**
 * Runs a typed-client call (components/api-client.ts) for a form: its result, or the error's text
 * to show beside the form.
 */
export async function attempt<T>(call: () => Promise<T>): Promise<{ ok: true; data: T } | { ok: false; error: string }> {
  try {
    return { ok: true, data: await call() };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** How the admin page shows a timestamp: in the organization's zone, the zone named (the one formatter, formatInstant). */
export function useWhen(): (iso: string | null) => string {
  const timeZone = useOrgTimeZone();
  return (iso) => formatInstant(iso, timeZone);
}
