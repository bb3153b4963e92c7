import "server-only";
import { createRemoteJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from "jose";
import { config } from "@/lib/config";
import { Unauthenticated, Forbidden } from "@/lib/errors";
import { principalFromApiKey } from "./api-key-principal";
import { isApiKeyToken } from "./api-key-secret";
import { findBearerMember, findOrganization } from "./directory";
import { localIssuerKey } from "./local-issuer";
import { readLocationClaim } from "./location-claim";
import { Role, type Principal } from "@/lib/access/roles";
import { processSingleton } from "@/lib/process-singleton";

// Asymmetric algorithms only: `none` and HMAC tokens (embed tokens among them) never verify here.
const ALGORITHMS = ["ES256", "RS256", "PS256", "EdDSA"];

/** The identity provider's keys, fetched and cached by jose; one set per process (AUTH_JWKS_URL needs a restart to change). */
export const jwksSingleton = processSingleton("jwks", () => createRemoteJWKSet(new URL(config().auth.jwksUrl!)));

async function verifyJwt(token: string): Promise<JWTPayload> {
  const { auth } = config();
  const options = { issuer: auth.issuer, audience: auth.audience, algorithms: ALGORITHMS };
  if (auth.jwksUrl) {
    return (await jwtVerify(token, jwksSingleton.get(), options)).payload;
  }
  const key = await localIssuerKey();
  try {
    return (await jwtVerify(token, key.publicKey, options)).payload;
  } catch (error) {
    // The usual cause (issue 32): a token from `npm run token` run against another data folder, whose key this server
    // does not have. Say so, without naming this server's folder.
    if ((error as { code?: unknown } | null)?.code === joseErrors.JWSSignatureVerificationFailed.code && otherKid(token, key.kid)) {
      throw new Unauthenticated(`Token signature is invalid: it was signed by another local issuer key (kid '${otherKid(token, key.kid)}'); run npm run token with the QUARRY_DATA_DIR this server uses`);
    }
    throw error;
  }
}

/** The token's key id when it names one other than `kid`. */
function otherKid(token: string, kid: string): string | null {
  try {
    const header = decodeProtectedHeader(token);
    return typeof header.kid === "string" && header.kid !== kid ? header.kid : null;
  } catch {
    return null;
  }
}

/**
 * By jose's error codes, not classes: the JWKS getter is a process singleton (globalThis) built by
 * whichever route bundle came first, and its jose copy's classes fail `instanceof` in another bundle.
 */
function describeJoseError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === joseErrors.JWTExpired.code) return "Token has expired";
  if (code === joseErrors.JWTClaimValidationFailed.code) return `Token claim '${String((error as { claim?: unknown }).claim)}' is invalid`;
  if (code === joseErrors.JOSEAlgNotAllowed.code) return "Token algorithm is not allowed";
  if (code === joseErrors.JWSSignatureVerificationFailed.code) return "Token signature is invalid";
  return "Token is malformed or not signed by a trusted issuer";
}

/**
 * Verifies a bearer token and maps its claims to a principal; 401 for any token problem, 403 for an unknown role.
 * An organization API key (`qk_…`) is recognised by its prefix before any JWT verification. A JWT must name an
 * active member of its organization (its subject as a user id, or its e-mail claim), checked on every request.
 */
export async function principalFromBearer(token: string): Promise<Principal> {
  if (isApiKeyToken(token)) return principalFromApiKey(token);
  let payload: JWTPayload;
  try {
    payload = await verifyJwt(token);
  } catch (error) {
    throw error instanceof Unauthenticated ? error : new Unauthenticated(describeJoseError(error));
  }
  const { claims } = config().auth;
  const orgClaim = payload[claims.org];
  if (typeof orgClaim !== "string" || !orgClaim) throw new Unauthenticated(`Token has no '${claims.org}' claim`);
  const org = await findOrganization(orgClaim);
  if (!org) throw new Unauthenticated(`Token names an unknown organization '${orgClaim}'`);
  const role = Role.safeParse(payload[claims.role]);
  if (!role.success) throw new Forbidden(`Token role '${String(payload[claims.role])}' is not one of ${Role.options.join(", ")}`);
  if (!payload.sub) throw new Unauthenticated("Token has no subject");
  const locations = readLocationClaim(payload[claims.locations]);
  if (!locations.ok) throw new Unauthenticated(`Token claim '${claims.locations}' ${locations.reason}`);
  const email = payload[claims.email];
  const userId = await findBearerMember(org.id, payload.sub, typeof email === "string" ? email : null);
  if (!userId) throw new Unauthenticated(`Token names no active member of organization '${org.slug}'`);
  return { userId, orgId: org.id, orgSlug: org.slug, orgName: org.name, role: role.data, locationIds: locations.locationIds, via: "bearer" };
}
