import { route } from "@/lib/api/route";
import { requeueDeadLetterEndpoint } from "@/lib/notifications/contract";
import { requeueDeadLetter } from "@/lib/notifications/admin/dead-letters";
import { defaultRuntime } from "@/lib/notifications/pipeline/worker";

export const POST = route(requeueDeadLetterEndpoint, async ({ principal, params }) => requeueDeadLetter(principal, params.id, await defaultRuntime()));
