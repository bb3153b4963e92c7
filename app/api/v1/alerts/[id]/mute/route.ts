import { route } from "@/lib/api/route";
import { muteAlert } from "@/lib/alerts/operations";

export const POST = route(muteAlert);
