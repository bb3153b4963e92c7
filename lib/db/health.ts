import "server-only";
import { ApiError } from "@/lib/api/errors";
import { getDb } from "./client";

/**
 * Ready once the database is open and answers; 503 otherwise (load balancers, the e2e runner).
 * The embedded engine answers from its supervisor's state, never waiting on the engine process:
 * a long statement there must not make the service look down (a restart takes seconds).
 */
export async function checkHealth() {
  try {
    const db = await getDb();
    if (db.engine) {
      if (db.engine.state !== "ready" && db.engine.state !== "restarting") throw new Error(`embedded database ${db.engine.state}`);
    } else {
      await db.system.query("SELECT 1");
    }
    return { status: "ok" as const, database: db.kind };
  } catch {
    throw new ApiError(503, "database is not ready");
  }
}
