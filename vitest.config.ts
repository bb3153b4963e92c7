import { defineConfig } from "vitest/config";
import { measurePace, paced } from "./test/machine-pace.ts";

// Default bounds for a quiet machine, stretched by its load measured as the run starts (issue 47 §4).
const pace = measurePace();

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
    testTimeout: paced(30_000, pace),
    hookTimeout: paced(120_000, pace),
    pool: "forks",
    maxWorkers: 2,
  },
});
