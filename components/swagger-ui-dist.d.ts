// swagger-ui-dist ships no types; components/api-reference.tsx calls its bundle's one export.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const SwaggerUIBundle: (options: Record<string, unknown>) => unknown;
  export default SwaggerUIBundle;
}
