import type { Metadata } from "next";
import { CompleteResetForm } from "@/components/members/public-forms";

export const metadata: Metadata = { title: "Choose a new password" };

export default async function CompleteResetPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  return (
    <div className="page" style={{ maxWidth: 460 }}>
      <h1>Choose a new password</h1>
      <CompleteResetForm token={token} />
    </div>
  );
}
