import NextAuth from "next-auth";
import { nextAuthOptions } from "@/lib/sso/next-auth";
import { signInGate } from "@/lib/api/sign-in-gate";

type NextAuthRouteContext = { params: Promise<{ nextauth: string[] }> };

// next-auth v4 reads the catch-all segment from the context; resolve it once per request.
async function handler(req: Request, context: NextAuthRouteContext) {
  const params = await context.params;
  const refused = await signInGate(req, params.nextauth);
  if (refused) return refused;
  return NextAuth(req as never, { params } as never, await nextAuthOptions(params.nextauth));
}

export { handler as GET, handler as POST };
