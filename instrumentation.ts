// Open (and in embedded mode migrate and seed) the database when the server
// starts, so no request pays PGlite's boot time.

/**
 * How scripts/server.mjs learns that the boot finished (it prints "Quarry is ready" then) or failed (it exits 1):
 * Next.js does not wait for register() before app.prepare() resolves. Same process, so globalThis is shared.
 */
const BOOT_HOOK = Symbol.for("quarry.boot");
type BootHook = { resolve: () => void; reject: (error: unknown) => void };

export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs" || process.env.NEXT_PHASE === "phase-production-build") return;
  const hook = (globalThis as { [BOOT_HOOK]?: BootHook })[BOOT_HOOK];
  try {
    const { boot } = await import("./lib/boot");
    await boot();
  } catch (error) {
    hook?.reject(error);
    throw error;
  }
  hook?.resolve();
}
