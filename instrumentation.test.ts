import { afterEach, describe, expect, it, vi } from "vitest";

// Issue 32 §3: scripts/server.mjs printed its "ready" line when app.prepare() resolved, about 40 s before the boot
// (database, migrations, demo data) had finished, because Next.js does not wait for register(). register() now
// reports the boot's end, or its failure, through a hook server.mjs sets on globalThis before prepare().

const boot = vi.fn<() => Promise<void>>();
vi.mock("./lib/boot", () => ({ boot }));

const HOOK = Symbol.for("quarry.boot");
const hooked = () => {
  const calls: string[] = [];
  (globalThis as Record<symbol, unknown>)[HOOK] = { resolve: () => calls.push("resolved"), reject: (e: unknown) => calls.push(`rejected: ${(e as Error).message}`) };
  return calls;
};

afterEach(() => {
  delete (globalThis as Record<symbol, unknown>)[HOOK];
  vi.unstubAllEnvs();
});

describe("instrumentation register()", () => {
  it("resolves the server's hook only once the boot has finished", async () => {
    vi.stubEnv("NEXT_RUNTIME", "nodejs");
    const calls = hooked();
    let finish!: () => void;
    boot.mockImplementationOnce(() => new Promise<void>((resolve) => (finish = resolve)));
    const { register } = await import("./instrumentation");
    const registered = register();
    await vi.waitFor(() => expect(boot).toHaveBeenCalled());
    expect(calls).toEqual([]);
    finish();
    await registered;
    expect(calls).toEqual(["resolved"]);
  });

  it("rejects it with the boot's error, and still throws for Next.js", async () => {
    vi.stubEnv("NEXT_RUNTIME", "nodejs");
    const calls = hooked();
    boot.mockRejectedValueOnce(new Error("database unreachable"));
    const { register } = await import("./instrumentation");
    await expect(register()).rejects.toThrow("database unreachable");
    expect(calls).toEqual(["rejected: database unreachable"]);
  });

  it("does nothing during next build", async () => {
    vi.stubEnv("NEXT_RUNTIME", "nodejs");
    vi.stubEnv("NEXT_PHASE", "phase-production-build");
    const calls = hooked();
    boot.mockClear();
    const { register } = await import("./instrumentation");
    await register();
    expect(boot).not.toHaveBeenCalled();
    expect(calls).toEqual([]);
  });
});
