// `POST /api/auth/signout` on a replica of the topology tests, up to where next-auth takes over:
// app/api/auth/[...nextauth] runs signInGate first, which checks the Origin and revokes the
// request's session in the database; next-auth then only clears the browser's cookie, and it needs
// Next.js's request scope, which the replica harness (test/replica.ts) does not provide.
import type { NextRequest } from "next/server";
import { signInGate } from "@/lib/api/sign-in-gate";

export async function POST(req: NextRequest): Promise<Response> {
  return (await signInGate(req, ["signout"])) ?? new Response(null, { status: 204 });
}
