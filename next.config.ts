import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite ships WebAssembly and data files it loads from its own folder at run time.
  serverExternalPackages: ["@electric-sql/pglite", "pdfjs-dist", "pg-boss"],
  poweredByHeader: false,
  typedRoutes: false,
};

export default nextConfig;
