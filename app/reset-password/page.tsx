import type { Metadata } from "next";
import { RequestResetForm } from "@/components/members/public-forms";

export const metadata: Metadata = { title: "Reset your password" };

export default function RequestResetPage() {
  return (
    <div className="page" style={{ maxWidth: 460 }}>
      <h1>Reset your password</h1>
      <p className="muted">We e-mail a link that works once, for an hour. Your organization&apos;s admin can also send you one from Members.</p>
      <RequestResetForm />
    </div>
  );
}
