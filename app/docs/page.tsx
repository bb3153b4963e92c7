import type { Metadata } from "next";
import { ApiReference } from "@/components/api-reference";

export const metadata: Metadata = { title: "API reference" };

export default function DocsPage() {
  return (
    <div className="page docs-page">
      <h1>Quarry API</h1>
      <p className="muted">
        Generated from the same schemas the server validates with (<a href="/openapi.json">/openapi.json</a>). Authorize with a
        bearer token: <code>npm run token -- --org acme --role admin</code> prints one in the embedded default.
      </p>
      <ApiReference url="/openapi.json" />
    </div>
  );
}
