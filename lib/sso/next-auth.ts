import "server-only";
import type { NextAuthOptions } from "next-auth";
import { authOptions } from "@/lib/auth/session";
import { log } from "@/lib/log";
import { ssoProvider } from "./provider";
import { passwordSignInRefused, ssoSignIn } from "./sign-in";

/**
 * next-auth's options for one request to its routes: with the organization's OpenID Connect provider
 * when the request starts (`signin/sso-<slug>`) or ends (`callback/sso-<slug>`) an SSO sign-in. Providers
 * are per organization and per request, so a change of settings holds at the next sign-in on every replica.
 */
export async function nextAuthOptions(segments: readonly string[]): Promise<NextAuthOptions> {
  const [action, providerId] = segments;
  const hooks = { signIn: ssoSignIn, passwordRefused: passwordSignInRefused };
  if ((action !== "signin" && action !== "callback") || !providerId?.startsWith("sso-")) return authOptions({ ...hooks, providers: [] });
  const provider = await ssoProvider(providerId).catch((error: unknown) => {
    // next-auth then answers as for an unknown provider: back to the sign-in page with an error code.
    log.warn("sso provider unavailable", { provider: providerId, error: error instanceof Error ? error.message : String(error) });
    return null;
  });
  return authOptions({ ...hooks, providers: provider ? [provider] : [] });
}
