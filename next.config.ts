import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite and libpg-query ship WebAssembly and data files they load from their own folder at run time;
  // resvg is a native addon, and the report fonts are files read from their packages' folders (lib/reports/fonts.ts).
  serverExternalPackages: ["@electric-sql/pglite", "pdfjs-dist", "pg-boss", "libpg-query", "@resvg/resvg-js", "pdfkit", "svg-to-pdfkit", "fontkit", "@embedpdf/fonts-latin", "@embedpdf/fonts-sc"],
  poweredByHeader: false,
  typedRoutes: false,
};

export default nextConfig;
