import NextAuth from "next-auth";
import { authOptions } from "@/lib/auth/session";

type NextAuthRouteContext = { params: Promise<{ nextauth: string[] }> };

// next-auth v4 reads the catch-all segment from the context; resolve it once per request.
async function handler(req: Request, context: NextAuthRouteContext) {
  return NextAuth(req as never, { params: await context.params } as never, authOptions());
}

export { handler as GET, handler as POST };
