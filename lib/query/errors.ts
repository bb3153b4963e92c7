/**
 * A widget-level failure: the widget shows `message`, the rest of the dashboard still renders.
 * Messages are safe to show to the dashboard's viewers (no stack, no connection details).
 */
export type QueryErrorCode =
  | "unknown_widget"
  | "bad_manifest"
  | "bad_filter_value"
  | "bad_sql"
  | "write_not_allowed"
  | "multiple_statements"
  | "timeout"
  | "budget"
  | "sql_not_allowed"
  | "user_sql_unavailable"
  | "busy"
  | "sql_error";

export class QueryError extends Error {
  constructor(
    readonly code: QueryErrorCode,
    message: string,
    /** The database's own message, for callers that react to a specific failure (never shown as is). */
    readonly sqlMessage?: string,
  ) {
    super(message);
    this.name = "QueryError";
  }
}
