import { route } from "@/lib/api/route";
import { testAlert } from "@/lib/alerts/operations";

export const POST = route(testAlert);
