import { route } from "@/lib/api/route";
import { openAlertPicture } from "@/lib/alerts/operations";

export const GET = route(openAlertPicture);
