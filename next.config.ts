import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite and libpg-query ship WebAssembly and data files they load from their own folder at run time.
  serverExternalPackages: ["@electric-sql/pglite", "pdfjs-dist", "pg-boss", "libpg-query"],
  poweredByHeader: false,
  typedRoutes: false,
};

export default nextConfig;
