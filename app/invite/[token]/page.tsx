import type { Metadata } from "next";
import Link from "next/link";
import { invitationForToken } from "@/lib/members/invitations";
import { AcceptInvitationForm } from "@/components/members/public-forms";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Accept an invitation" };

const WHY: Record<string, string> = {
  unknown: "This invitation link is not valid. Check that you copied all of it.",
  accepted: "This invitation was already used.",
  revoked: "This invitation was withdrawn.",
  expired: "This invitation has expired.",
};

export default async function AcceptInvitationPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const invitation = await invitationForToken(token);
  return (
    <div className="page" style={{ maxWidth: 460 }}>
      <h1>Join Quarry</h1>
      {invitation.status === "pending" ? (
        <>
          <p>
            You are invited to <strong>{invitation.organization}</strong> as {invitation.role.replace("_", " ")}, with the address <code>{invitation.email}</code>.
          </p>
          <AcceptInvitationForm token={token} email={invitation.email} />
        </>
      ) : (
        <div className="error-box" role="alert">
          {WHY[invitation.status]} Ask the person who invited you for a new one, or <Link href="/signin">sign in</Link>.
        </div>
      )}
    </div>
  );
}
