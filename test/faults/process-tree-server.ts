// The server of the process-tree fault test (process-tree-kill.test.ts): test/replica.ts — the real start-up with its
// engine processes and the real route handlers — stopping the way scripts/server.mjs does (scripts/supervise.mjs's
// onStopRequest: a signal, or its supervisor gone). A production build is not needed.
import { onStopRequest } from "@/scripts/supervise.mjs";

onStopRequest(() => process.exit(0));
await import("@/test/replica");
