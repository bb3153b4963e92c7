"use client";
import { useState } from "react";
import { signOut } from "next-auth/react";

/**
 * "Sign out everywhere": ends every session of this user, on every device (DELETE /api/v1/me/sessions),
 * then signs this browser out as the ordinary button does.
 */
export function SignOutEverywhereButton() {
  const [state, setState] = useState<"idle" | "pending" | "failed">("idle");

  async function endAll() {
    setState("pending");
    const res = await fetch("/api/v1/me/sessions", { method: "DELETE" }).catch(() => null);
    if (!res || (res.status !== 204 && res.status !== 401)) {
      setState("failed");
      return;
    }
    await signOut({ callbackUrl: "/signin" });
  }

  return (
    <button type="button" className="link-button" onClick={endAll} disabled={state === "pending"} title="End every session of your account, on every device">
      {state === "failed" ? "Sign out everywhere failed, retry" : "Sign out everywhere"}
    </button>
  );
}
