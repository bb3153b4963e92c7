import { route } from "@/lib/api/route";
import { listPullRuns, runPullNow } from "@/lib/data/pipes/operations";

export const GET = route(listPullRuns);
export const POST = route(runPullNow);
