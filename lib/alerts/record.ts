import "server-only";
import { z } from "zod";
import type { WidgetAlert } from "@/lib/db/generated/client";
import { alertDeclarationFields, type AlertCadence } from "@/lib/manifest/alert";

/**
 * What widget_alerts.definition holds: the declaration's fields that have no column of their own, read back through
 * the declaration's own schema (lib/manifest/alert.ts), so a stored alert means what the manifest and the API say.
 */
export const StoredDefinition = z.object(alertDeclarationFields).omit({ name: true, widget_id: true, cadence: true });
export type StoredDefinition = z.output<typeof StoredDefinition>;

/** A stored alert with its definition read. */
export interface AlertRecord {
  row: WidgetAlert;
  definition: StoredDefinition;
  cadence: AlertCadence;
}

export function alertRecord(row: WidgetAlert): AlertRecord {
  const cadence: AlertCadence = row.cadenceKind === "cron" ? { kind: "cron", cron: row.cron ?? "" } : { kind: "on_data_change" };
  return { row, definition: StoredDefinition.parse(row.definition), cadence };
}
