import "server-only";
import { TypeInference, columnIdentifiers, type ColumnType, type RowSource } from "@/lib/data/formats";
import type { LoadColumn } from "@/lib/data/load";
import type { TableEntry } from "@/lib/data/tables";

/**
 * The load's columns for a source's header: each header named as uploads name it (columnIdentifiers), typed as the
 * table has it. A column the table lacks keeps its place, typed by `types` (a database source's own types) or by
 * inference over the whole source (`inferFrom` opens it again), and the loader adds it when asked or refuses it
 * naming the column (lib/data/load.ts). With no table yet, every column is new.
 */
export async function columnsFor(
  entry: Pick<TableEntry, "columns"> | null,
  header: readonly string[],
  options: { addNewColumns: boolean; types?: readonly ColumnType[]; inferFrom?: () => Promise<RowSource> },
): Promise<LoadColumn[]> {
  const names = columnIdentifiers(header);
  const known = new Map((entry?.columns ?? []).map((c) => [c.name, c.type]));
  const missing = names.some((name) => !known.has(name));
  let types = options.types;
  if (!types && missing && (options.addNewColumns || !entry) && options.inferFrom) types = await inferTypes(await options.inferFrom());
  return names.map((name, from) => ({ name, from, type: known.get(name) ?? types?.[from] ?? "text" }));
}

/** Each column's type over every row of the source (lib/data/formats' rule). */
export async function inferTypes(source: RowSource): Promise<ColumnType[]> {
  const inference = new TypeInference(source.header.length);
  for await (const row of source.rows) inference.observe(row);
  return inference.result();
}
