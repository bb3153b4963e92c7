import { defineConfig } from "prisma/config";

// The CLI is only used for `prisma generate`; migrations are applied by lib/db/migrate.ts.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
});
