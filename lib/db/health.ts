import "server-only";
import { ApiError } from "@/lib/api/errors";
import { getDb } from "./client";

/** Ready once the database is open and answers; 503 otherwise (load balancers, the e2e runner). */
export async function checkHealth() {
  try {
    const db = await getDb();
    await db.system.query("SELECT 1");
    return { status: "ok" as const, database: db.kind };
  } catch {
    throw new ApiError(503, "database is not ready");
  }
}
