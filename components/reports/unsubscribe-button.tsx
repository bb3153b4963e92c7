"use client";

import { useState } from "react";
import { callApi } from "@/components/api-client";
import { unsubscribeReport } from "@/lib/reports/schedules-contract";

/** Confirms an unsubscribe link (the same one-click endpoint mail clients POST to). */
export function UnsubscribeButton({ token }: { token: string }) {
  const [state, setState] = useState<{ tone: "idle" | "busy" | "done" | "error"; text?: string }>({ tone: "idle" });
  async function confirm() {
    setState({ tone: "busy" });
    try {
      const done = await callApi(unsubscribeReport, { params: { token } });
      setState({ tone: "done", text: `${done.recipient} no longer receives "${done.schedule_name}".` });
    } catch (error) {
      setState({ tone: "error", text: (error as Error).message });
    }
  }
  if (state.tone === "done") return <p role="status">{state.text}</p>;
  return (
    <>
      <button type="button" className="button primary" onClick={confirm} disabled={state.tone === "busy"}>
        {state.tone === "busy" ? "Unsubscribing…" : "Unsubscribe"}
      </button>
      {state.tone === "error" && (
        <p role="alert" className="error-box">
          {state.text}
        </p>
      )}
    </>
  );
}
