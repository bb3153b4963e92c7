"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";

/** An admin's certify / remove certification of one metric's current definition. */
export function CertifyButton({ dataset, metric, certified, label }: { dataset: string; metric: string; certified: boolean; label: string }) {
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function toggle() {
    setBusy(true);
    setError(null);
    const res = await fetch(`/api/v1/metrics/${encodeURIComponent(dataset)}/${encodeURIComponent(metric)}/certification`, { method: certified ? "DELETE" : "PUT" });
    setBusy(false);
    if (!res.ok) {
      const body = (await res.json().catch(() => null)) as { detail?: unknown } | null;
      setError(typeof body?.detail === "string" ? body.detail : `failed (${res.status})`);
      return;
    }
    router.refresh();
  }
  return (
    <div>
      <button type="button" onClick={toggle} disabled={busy} aria-label={`${certified ? "Remove certification of" : "Certify"} ${label}`}>
        {certified ? "Remove" : "Certify"}
      </button>
      {error && <p role="alert">{error}</p>}
    </div>
  );
}
