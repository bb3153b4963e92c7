import { route } from "@/lib/api/route";
import { deleteSsoSettings, getSsoSettings, saveSsoSettings } from "@/lib/sso/operations";

export const GET = route(getSsoSettings);
export const PUT = route(saveSsoSettings);
export const DELETE = route(deleteSsoSettings);
