import { route } from "@/lib/api/route";
import { requeueDeadLetterEndpoint } from "@/lib/notifications/contract";
import { requeueDeadLetter } from "@/lib/notifications/pipeline";
import { defaultRuntime } from "@/lib/notifications/worker";

export const POST = route(requeueDeadLetterEndpoint, async ({ principal, params }) => requeueDeadLetter(principal, params.id, await defaultRuntime()));
