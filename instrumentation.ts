// Open (and in embedded mode migrate and seed) the database when the server
// starts, so no request pays PGlite's boot time.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs" || process.env.NEXT_PHASE === "phase-production-build") return;
  const { boot } = await import("./lib/boot");
  await boot();
}
