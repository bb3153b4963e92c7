import "server-only";
import type { WidgetAlert } from "@/lib/db/generated/client";
import { AlertDefinition, type AlertCadence } from "@/lib/manifest/alert";

/**
 * A stored alert with its definition read: widget_alerts.definition holds the declaration's fields that have no
 * column of their own, read back through the declaration's own schema (lib/manifest/alert.ts AlertDefinition), so a
 * stored alert means what the manifest and the API say.
 */
export interface AlertRecord {
  row: WidgetAlert;
  definition: AlertDefinition;
  cadence: AlertCadence;
}

export function alertRecord(row: WidgetAlert): AlertRecord {
  const cadence: AlertCadence = row.cadenceKind === "cron" ? { kind: "cron", cron: row.cron ?? "" } : { kind: "on_data_change" };
  return { row, definition: AlertDefinition.parse(row.definition), cadence };
}
