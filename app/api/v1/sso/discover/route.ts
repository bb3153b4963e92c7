import { route } from "@/lib/api/route";
import { discoverSso } from "@/lib/sso/operations";

export const POST = route(discoverSso);
