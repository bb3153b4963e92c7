/** A call to the notifications API from the browser (session cookie): the parsed body, or the `detail` of the error as one line. */
export async function api<T = unknown>(method: string, url: string, body?: unknown): Promise<{ ok: true; data: T } | { ok: false; error: string }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: body === undefined ? undefined : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
  } catch {
    return { ok: false, error: "The server could not be reached; check your connection and try again." };
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (res.ok) return { ok: true, data: parsed as T };
  return { ok: false, error: problem(res.status, parsed) };
}

function problem(status: number, body: unknown): string {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (Array.isArray(detail)) {
    return detail.map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).filter((l) => l !== "body").join(".")}: ${d.msg}`).join("; ");
  }
  if (typeof detail === "string") return status === 429 ? `${detail} (rate limited; try again shortly)` : detail;
  return `Request failed (HTTP ${status})`;
}

/** A timestamp as the admin page shows it: local date and time, minutes precision. */
export const when = (iso: string | null) =>
  iso ? new Date(iso).toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" }) : "—";
