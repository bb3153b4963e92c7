// The supervisor of the process-tree fault test, wired as scripts/start.mjs wires it (scripts/supervise.mjs), over
// process-tree-server.ts instead of scripts/server.mjs (which needs a production build). A server killed at any time
// after its start is restarted (startupMs 0), as one killed after 30 s is under npm start.
import { onStopRequest, supervise } from "../../scripts/supervise.mjs";

const supervisor = supervise({
  command: process.execPath,
  args: ["--import", "tsx", "--conditions=react-server", "test/faults/process-tree-server.ts"],
  startupMs: 0,
});
onStopRequest(() => supervisor.stop("SIGTERM"));
