import "server-only";
import { DomainError } from "@/lib/errors";
import { verifyEmbedToken } from "./embeds";

/**
 * What the request gate needs of an embed page: CSP frame-ancestors, the grant's partner origins
 * (none configured: any page may frame it), and the organization whose image origins apply. A
 * link that does not verify only shows an error page with nothing to click, so it may be framed
 * too and the partner's visitors read why instead of a blank frame; it has no organization.
 */
export async function embedPagePolicy(token: string): Promise<{ frameAncestors: string; orgId: string | null }> {
  try {
    const grant = await verifyEmbedToken(token);
    return { frameAncestors: grant.allowedOrigins.length > 0 ? grant.allowedOrigins.join(" ") : "*", orgId: grant.orgId };
  } catch (error) {
    if (error instanceof DomainError) return { frameAncestors: "*", orgId: null };
    throw error;
  }
}
