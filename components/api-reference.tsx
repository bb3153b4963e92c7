"use client";
import dynamic from "next/dynamic";
import "swagger-ui-react/swagger-ui.css";

// Swagger UI touches `window` while loading, so it renders in the browser only.
const SwaggerUI = dynamic(() => import("swagger-ui-react"), {
  ssr: false,
  loading: () => <p className="muted">Loading the API reference…</p>,
});

export function ApiReference({ url }: { url: string }) {
  return (
    <div className="api-reference" data-testid="api-reference">
      <SwaggerUI url={url} docExpansion="list" defaultModelsExpandDepth={0} persistAuthorization tryItOutEnabled />
    </div>
  );
}
