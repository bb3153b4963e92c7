import "server-only";
import { DomainError } from "@/lib/errors";
import { verifyEmbedToken } from "./embeds";

/**
 * CSP frame-ancestors for an embed page: the grant's partner origins (none configured: any
 * page may frame it). A link that does not verify only shows an error page with nothing to
 * click, so it may be framed too and the partner's visitors read why instead of a blank frame.
 */
export async function embedFrameAncestors(token: string): Promise<string> {
  try {
    const grant = await verifyEmbedToken(token);
    return grant.allowedOrigins.length > 0 ? grant.allowedOrigins.join(" ") : "*";
  } catch (error) {
    if (error instanceof DomainError) return "*";
    throw error;
  }
}
