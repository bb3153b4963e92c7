import pg from "pg";
import { config } from "@/lib/config";
import type { SqlRunner } from "./sql";

/** One dedicated connection to the PostgreSQL server (migrations need BEGIN/COMMIT on one session). */
export async function connectServer(): Promise<pg.Client> {
  const cfg = config();
  if (cfg.database.kind !== "postgres") throw new Error("DATABASE_URL is not set");
  const client = new pg.Client({ connectionString: cfg.database.url });
  await client.connect();
  return client;
}

export function clientRunner(client: pg.Client): SqlRunner {
  return {
    exec: async (sql) => void (await client.query(sql)),
    query: async (sql, params) => (await client.query(sql, params as unknown[])).rows,
  };
}
