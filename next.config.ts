import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite and libpg-query ship WebAssembly and data files they load from their own folder at run time;
  // resvg is a native addon, and the report fonts are files read from their packages' folders (lib/reports/fonts.ts).
  serverExternalPackages: ["@electric-sql/pglite", "pdfjs-dist", "pg-boss", "libpg-query", "@resvg/resvg-js", "pdfkit", "svg-to-pdfkit", "fontkit", "@embedpdf/fonts-latin", "@embedpdf/fonts-sc"],
  poweredByHeader: false,
  typedRoutes: false,
  // `npm start` builds without next's own type check (scripts/start.mjs sets this): `npm test` and CI run
  // `tsc --noEmit` over the same code, and the check took 4.5 of a cold build's 9.5 minutes (issue 47). Any other build
  // (`npm run build`, the test command's) keeps it.
  typescript: { ignoreBuildErrors: process.env.QUARRY_BUILD_WITHOUT_TYPECHECK === "1" },
};

export default nextConfig;
