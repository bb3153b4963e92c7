import type { z } from "zod";
import type { DataTable, LoadBody, LoadResult, TableReader, UploadPreview } from "@/lib/data/contract";
import type { SourceFormat } from "@/lib/data/formats/types";

/*
 * What the /data page asks of the API, in one interface so the components stay free of endpoints:
 * the organization's tables, an upload with progress and its preview (header, first rows, types
 * inferred over every row), reading it again with another sheet/delimiter/encoding, a load, a drop.
 */

export type { DataTable, LoadResult, UploadPreview };
export type TableReaderView = z.infer<typeof TableReader>;
export type LoadRequestBody = z.input<typeof LoadBody>;

/** A refused row: a skipped one in a load's report, or one a failed load's 422 names. */
export interface BadRowView {
  row: number;
  column: string;
  value?: string | null;
  message: string;
}

export interface DataApi {
  upload(file: File, options: { format: SourceFormat; delimiter?: string }, onProgress: (fraction: number) => void): Promise<UploadPreview>;
  preview(uploadId: string, options: { sheet?: string; delimiter?: string; encoding?: string }): Promise<UploadPreview>;
  load(body: LoadRequestBody): Promise<LoadResult>;
  list(): Promise<DataTable[]>;
  /** Drops the table; a refusal because something reads it rejects with ApiClientError 409. */
  drop(name: string, force: boolean): Promise<void>;
}

/**
 * The refused rows a failed load's 422 names (items `{loc: ["rows", row, column], msg, type: "bad_value"}`):
 * each one's row, column and message (which quotes the value).
 */
export function badRowsOf(detail: unknown): BadRowView[] {
  if (!Array.isArray(detail)) return [];
  return detail.flatMap((item: { loc?: unknown[]; msg?: unknown; type?: unknown; value?: unknown }) => {
    const [where, row, column] = item.loc ?? [];
    if (where !== "rows" || typeof row !== "number" || typeof column !== "string" || typeof item.msg !== "string") return [];
    return [{ row, column, message: item.msg, ...(typeof item.value === "string" || item.value === null ? { value: item.value } : {}) }];
  });
}

/** What a 409 on drop says (`{"detail": {"message", "readers"}}`): the dashboards, embeds and alert rules that read the table. */
export function refusalOf(detail: unknown, fallback: string): { message: string; readers: TableReaderView[] } {
  const body = (detail ?? {}) as { message?: unknown; readers?: unknown };
  return {
    message: typeof body.message === "string" ? body.message : typeof detail === "string" ? detail : fallback,
    readers: Array.isArray(body.readers) ? (body.readers as TableReaderView[]) : [],
  };
}
