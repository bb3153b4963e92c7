import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { describePortHolder } from "./port-holder.mjs";

/*
 * "Port in use" names the process holding the port (issue 47 §1): a real listener in another process,
 * found through /proc, and the message scripts/server.mjs prints with it.
 */

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** A process listening on a free port; resolves with the port once it listens. */
function holdPort(host?: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ["-e", `const s = require("net").createServer().listen(0, ${JSON.stringify(host ?? null)} ?? undefined, () => console.log(s.address().port)); setInterval(() => {}, 1000);`], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.once("data", (chunk: Buffer) => resolve({ child, port: Number(chunk.toString().trim()) }));
    child.once("exit", (code) => reject(new Error(`the listener exited (${code})`)));
  });
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

describe.skipIf(process.platform !== "linux")("describePortHolder", () => {
  it("names the pid and command line of the process listening on a port, on every address or one IPv4 address", async () => {
    for (const host of [undefined, "127.0.0.1"]) {
      const { child, port } = await holdPort(host);
      const holder = describePortHolder(port);
      expect(holder).toContain(`pid ${child.pid} (`);
      expect(holder).toContain(`${process.execPath} -e`);
    }
  });

  it("tells nothing about a port no one listens on", async () => {
    expect(describePortHolder(await freePort())).toBeUndefined();
  });

  it("scripts/server.mjs says who holds the port it cannot have, before it touches anything", async () => {
    const { child, port } = await holdPort();
    const server = spawn(process.execPath, ["scripts/server.mjs"], { env: { ...process.env, PORT: String(port), NODE_ENV: "production" }, stdio: ["ignore", "pipe", "pipe"] });
    children.push(server);
    let output = "";
    server.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    server.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => server.once("exit", (exitCode) => resolve(exitCode)));
    expect(code).toBe(1);
    expect(output).toContain(`Quarry cannot listen on port ${port}: pid ${child.pid} (${process.execPath} -e`);
    expect(output).toContain("is using it. Nothing was started.");
  });
});
