import { createHash } from "node:crypto";
import type { DatasetManifest } from "@/lib/manifest/schema";

/**
 * What a column means, as a hash: its dataset's source (from, query, kpi) and its own expression or column. Labels,
 * formats and aliases are how it is shown or named, not what it computes, so they change no definition. A metric's
 * certification holds for one definition hash (migration 0050).
 */
export function definitionHash(dataset: DatasetManifest, column: { id: string; type?: string; expression?: string; column?: string }): string {
  const meaning = { from: dataset.spec.from ?? null, query: dataset.spec.query ?? null, kpi: dataset.spec.kpi ?? null, type: column.type ?? null, expression: column.expression ?? column.column ?? null };
  return createHash("sha256").update(JSON.stringify(meaning)).digest("base64url");
}
