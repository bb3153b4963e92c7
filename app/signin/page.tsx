import Link from "next/link";
import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { safeCallbackPath } from "@/lib/auth/callback-url";
import { currentPagePrincipal } from "@/lib/auth/session";
import { config } from "@/lib/config";
import { DEMO_ORGS, DEMO_PASSWORD, DEMO_ROLES, demoEmail } from "@/lib/demo/seed";
import { SignInForm } from "@/components/sign-in-form";
import { SsoSignInForm } from "@/components/sso/sso-sign-in-form";
import { signInErrorText } from "@/lib/auth/sign-in-messages";
import { isSetupOpen } from "@/lib/members/setup";

export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string; error?: string }> }) {
  const { callbackUrl, error } = await searchParams;
  const cfg = config();
  // Only a page of this site (lib/auth/callback-url.ts): `/\evil.example/` passed a startsWith("/") test.
  const safeCallback = safeCallbackPath(callbackUrl, cfg.publicUrl);
  if (await currentPagePrincipal()) redirect(safeCallback);
  // An install without any organization starts with its setup (issue 43 §1).
  if (await isSetupOpen()) redirect("/setup");
  // Demo accounts are listed only in the embedded default, where they are the seeded users.
  const demo = cfg.database.kind === "pglite" && cfg.seedDemo
    ? DEMO_ORGS.flatMap((org) => DEMO_ROLES.map((role) => ({ email: demoEmail(org.slug, role), label: `${org.name} · ${role.replace("_", " ")}` })))
    : [];
  return (
    <div className="page" style={{ maxWidth: 460 }}>
      <h1>Sign in to Quarry</h1>
      <SignInForm callbackUrl={safeCallback} initialError={signInErrorText(error ?? null)} />
      <SsoSignInForm callbackUrl={safeCallback} />
      <p className="muted"><Link href="/reset-password">Forgot your password?</Link></p>
      {demo.length > 0 && (
        <section className="card" style={{ marginTop: "1.5rem" }}>
          <h2>Demo accounts</h2>
          <p>Password for every account: <code>{DEMO_PASSWORD}</code></p>
          <ul>
            {demo.map((d) => (
              <li key={d.email}><code>{d.email}</code> <span className="muted">— {d.label}</span></li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}
