import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { isSetupOpen } from "@/lib/members/setup";
import { SetupForm } from "@/components/members/public-forms";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Set up Quarry" };

/** The first page of an install without any organization; gone once one exists (issue 43 §1). */
export default async function SetupPage() {
  if (!(await isSetupOpen())) notFound();
  return (
    <div className="page" style={{ maxWidth: 520 }}>
      <h1>Set up Quarry</h1>
      <p className="muted">This install has no organization yet. Create yours and its first admin; this page then goes away.</p>
      <SetupForm defaultTimeZone="UTC" />
    </div>
  );
}
