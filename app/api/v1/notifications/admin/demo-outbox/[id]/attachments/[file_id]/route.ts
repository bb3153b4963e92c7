import { route } from "@/lib/api/route";
import { downloadDemoOutboxAttachment } from "@/lib/notifications/operations";

export const GET = route(downloadDemoOutboxAttachment);
