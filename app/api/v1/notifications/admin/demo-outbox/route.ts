import { route } from "@/lib/api/route";
import { listDemoOutbox } from "@/lib/notifications/operations";

export const GET = route(listDemoOutbox);
