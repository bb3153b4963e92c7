/**
 * The smallest surface the migrator and seed need from either driver: run a
 * multi-statement script, or one parameterized statement.
 */
export interface SqlRunner {
  exec(sql: string): Promise<void>;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}
