import { UpstreamFailed } from "@/lib/errors";

/** A pull's source could not be read (refused host, connection, query, object, answer); the message is safe to show the admin. */
export class PullFailed extends UpstreamFailed {}
