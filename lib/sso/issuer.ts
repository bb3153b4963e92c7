import "server-only";
import type { LookupFunction } from "node:net";
import { z } from "zod";
import { assertPublicHost, guardedFetch } from "@/lib/notifications/transports/url-guard";

/** What Quarry reads of a provider's discovery document (OpenID Connect Discovery 1.0 §3). */
const IssuerMetadata = z.object({
  issuer: z.string(),
  authorization_endpoint: z.url(),
  token_endpoint: z.url(),
  jwks_uri: z.url(),
  userinfo_endpoint: z.url().optional(),
});
export type IssuerMetadata = z.output<typeof IssuerMetadata>;

const DISCOVERY_TIMEOUT_MS = 10_000;

/**
 * Reads an issuer's discovery document through the outbound rules webhooks keep (a public address unless
 * NOTIFICATIONS_CONFIG.url_allow_list names the host; the connection pinned to the checked address), and
 * requires its `issuer` to be exactly the configured one (Discovery §4.3), so a document served elsewhere
 * cannot name another issuer. Throws with a message fit for the admin.
 */
export async function readIssuer(issuerUrl: string): Promise<IssuerMetadata> {
  const url = `${issuerUrl.replace(/\/$/, "")}/.well-known/openid-configuration`;
  let response: Response;
  try {
    response = await guardedFetch(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS) });
  } catch (error) {
    throw new Error(`The issuer's discovery document could not be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!response.ok) throw new Error(`The issuer's discovery document answered HTTP ${response.status}`);
  const parsed = IssuerMetadata.safeParse(await response.json().catch(() => null));
  if (!parsed.success) throw new Error("The issuer's discovery document is not an OpenID Connect one (issuer, authorization, token and JWKS endpoints)");
  if (parsed.data.issuer !== issuerUrl) throw new Error(`The discovery document names another issuer (${parsed.data.issuer})`);
  return parsed.data;
}

/**
 * A DNS lookup for the OpenID client's own calls (token endpoint, JWKS) that answers only with addresses
 * the outbound rules allow, so an endpoint the discovery document names cannot reach an internal host.
 */
export const outboundLookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
  assertPublicHost(hostname).then(
    (target) => (options?.all ? callback(null, [{ address: target.address, family: target.family }]) : callback(null, target.address, target.family)),
    (error: Error) => callback(error),
  );
}) as unknown as LookupFunction;
