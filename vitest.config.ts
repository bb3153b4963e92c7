import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: { "@": import.meta.dirname },
    // Server modules import "server-only", which resolves to an empty module under this condition.
    conditions: ["react-server"],
  },
  ssr: { resolve: { conditions: ["react-server"], externalConditions: ["react-server"] } },
  test: {
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", "e2e/**", ".next/**", ".data/**"],
    globalSetup: ["./test/global-setup.ts"],
    setupFiles: ["./test/setup-file.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
