import type { Metadata } from "next";
import { UnsubscribeButton } from "@/components/reports/unsubscribe-button";

export const metadata: Metadata = { title: "Unsubscribe from a report" };

/** Where a report e-mail's unsubscribe link leads: a button, so a mail scanner that follows links unsubscribes no one. */
export default async function UnsubscribePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  return (
    <div className="page">
      <h1>Unsubscribe from a scheduled report</h1>
      <p className="muted">You will no longer receive this report by e-mail. Other reports and notifications are not affected.</p>
      <UnsubscribeButton token={token} />
    </div>
  );
}
