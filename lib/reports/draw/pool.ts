import { type ChildProcess, fork } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Invalid, TimedOut, UpstreamFailed } from "@/lib/errors";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-singleton";
import { DRAW_PROCESS_LIMITS, type DrawProcessLimits, REPORT_QUEUE_LIMITS } from "../limits";
import type { DrawJob, DrawResult } from "./job";

/**
 * The supervisor of the draw processes (draw-process.mjs): a small warm pool of child processes
 * that lay out and write reports, so a render that crashes (a resvg panic aborts its process),
 * runs too long or takes too much memory ends that render alone. Each job is bounded:
 *
 * - time: the process is killed at the job's `renderMs` (TimedOut, 504);
 * - memory: V8's heap is capped by --max-old-space-size, and the process's resident memory (resvg's
 *   pixels are outside V8's heap) is read from /proc/<pid>/status while it draws; past the bound, or
 *   out of heap, it is killed (Invalid, 422: the same report would need the same memory again);
 * - a crash: the process died on its own (UpstreamFailed, 502).
 *
 * A killed or dead process is never reused: the next job starts another. At most `maxProcesses`
 * run (the render queue's total), started on first use and kept warm between jobs.
 */

/** Resolved from the working directory and loaded unbundled (as lib/db/engine-process.mjs); turbopackIgnore keeps Turbopack from tracing it. */
export const DRAW_PROCESS_FILE = path.join(/*turbopackIgnore: true*/ process.cwd(), "lib", "reports", "draw", "draw-process.mjs");

/** Loading tsx, ECharts, pdfkit and the fonts: a few seconds on a busy 2-core machine, bounded so a broken install fails the render instead of hanging it. */
const BOOT_TIMEOUT_MS = 60_000;
/** How often a drawing process's resident memory is read. */
const MEMORY_POLL_MS = 50;
/** The last bytes a process wrote to stderr, kept to say why it died. */
const STDERR_TAIL = 4_096;

type Reply = { id: number; ok: true; result: DrawResult } | { id: number; ok: false; message: string };

interface Drawer {
  child: ChildProcess;
  ready: Promise<void>;
  jobs: number;
  stderr: string;
}

/** What draws a report's job: the pool of draw processes (bench/report-render.ts also draws in its own process, for its baseline). */
export interface ReportDrawer {
  draw(job: DrawJob): Promise<DrawResult>;
}

export interface DrawPoolOptions extends DrawProcessLimits {
  maxProcesses: number;
}

export class DrawPool implements ReportDrawer {
  private readonly idle: Drawer[] = [];
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private nextId = 1;
  /** Processes started so far (for tests and diagnostics). */
  started = 0;

  constructor(private readonly options: DrawPoolOptions) {}

  /** Draws one report in a draw process, within `job.renderMs` and the pool's memory bounds. */
  async draw(job: DrawJob): Promise<DrawResult> {
    await this.slot();
    let drawer: Drawer | undefined;
    let reusable = false;
    try {
      drawer = this.takeIdle() ?? this.spawn();
      this.hold(drawer);
      await drawer.ready;
      const result = await this.run(drawer, job);
      reusable = true;
      return result;
    } finally {
      if (drawer) {
        drawer.jobs++;
        if (reusable && drawer.jobs < this.options.maxJobsPerProcess) this.park(drawer);
        else this.stop(drawer);
      }
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** The ids of the processes waiting for a job (for tests and diagnostics). */
  idleProcessIds(): number[] {
    return this.idle.flatMap(({ child }) => (child.pid === undefined ? [] : [child.pid]));
  }

  /** Stops every idle process (tests, shutdown); a drawing one ends with its job. */
  close(): void {
    for (const drawer of this.idle.splice(0)) this.stop(drawer);
  }

  /** A parked process still connected (one that died while parked may not have had its exit handled yet). */
  private takeIdle(): Drawer | undefined {
    for (let drawer = this.idle.pop(); drawer; drawer = this.idle.pop()) {
      if (drawer.child.connected) return drawer;
      this.stop(drawer);
    }
    return undefined;
  }

  private async slot(): Promise<void> {
    while (this.running >= this.options.maxProcesses) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
  }

  private spawn(): Drawer {
    this.started++;
    const child = fork(DRAW_PROCESS_FILE, [], {
      cwd: process.cwd(),
      // Not the server's own flags (a test runner's loaders, its inspector): only the heap cap.
      execArgv: [`--max-old-space-size=${this.options.heapMb}`],
      serialization: "advanced",
      stdio: ["ignore", "inherit", "pipe", "ipc"],
    });
    const drawer: Drawer = { child, jobs: 0, stderr: "", ready: Promise.resolve() };
    child.stderr?.on("data", (chunk: Buffer) => {
      drawer.stderr = (drawer.stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
    });
    // An error event nobody listens to would throw in the server; the exit that follows says what happened.
    child.on("error", (error) => log.warn("report draw process failed", { pid: child.pid, error: String(error) }));
    child.on("exit", () => {
      const index = this.idle.indexOf(drawer);
      if (index >= 0) this.idle.splice(index, 1);
    });
    drawer.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => done(new UpstreamFailed(`The report renderer did not start within ${BOOT_TIMEOUT_MS / 1000} s`)), BOOT_TIMEOUT_MS);
      const onMessage = (message: unknown) => {
        if ((message as { ready?: boolean }).ready) done();
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        log.warn("report draw process exited while starting", { pid: child.pid, code, signal, stderr: drawer.stderr.slice(-1_000) });
        done(new UpstreamFailed(`The report renderer exited while starting (${signal ?? `exit code ${code}`})`));
      };
      const done = (error?: Error) => {
        clearTimeout(timer);
        child.off("message", onMessage).off("exit", onExit);
        if (error) reject(error);
        else resolve();
      };
      child.on("message", onMessage).on("exit", onExit);
    });
    // Awaited by draw(); a start that fails before anyone awaits must not be an unhandled rejection.
    drawer.ready.catch(() => undefined);
    return drawer;
  }

  private run(drawer: Drawer, job: DrawJob): Promise<DrawResult> {
    const { child } = drawer;
    const id = this.nextId++;
    const { rssMb, heapMb } = this.options;
    return new Promise<DrawResult>((resolve, reject) => {
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearInterval(watch);
        child.off("message", onMessage).off("exit", onExit);
        outcome();
      };
      const kill = (error: Error) =>
        settle(() => {
          child.kill("SIGKILL");
          reject(error);
        });
      const onMessage = (reply: Reply) => {
        if (reply.id !== id) return;
        settle(() => (reply.ok ? resolve(reply.result) : reject(new UpstreamFailed(`The report could not be drawn: ${reply.message}`))));
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        const stderr = drawer.stderr;
        log.warn("report draw process died", { pid: child.pid, code, signal, stderr: stderr.slice(-1_000) });
        settle(() =>
          reject(
            /heap out of memory|Reached heap limit/i.test(stderr)
              ? memoryError(heapMb)
              : new UpstreamFailed(`The report renderer stopped while drawing this report (${signal ?? `exit code ${code}`}); nothing else was affected. A chart's options are the likely cause`),
          ),
        );
      };
      const timer = setTimeout(() => kill(new TimedOut(`Drawing this report took longer than its limit of ${formatSeconds(job.renderMs)} and was stopped; draw one tab, fewer rows or a narrower image`)), job.renderMs);
      const watch = setInterval(() => {
        const rss = residentMb(child.pid);
        if (rss !== null && rss > rssMb) kill(memoryError(rssMb));
      }, MEMORY_POLL_MS);
      child.on("message", onMessage).on("exit", onExit);
      child.send({ id, job });
    });
  }

  /** A process in use keeps the server's event loop alive; an idle one does not (a script or test may end with it parked). */
  private hold({ child }: Drawer): void {
    child.ref();
    child.channel?.ref();
    (child.stderr as unknown as { ref?: () => void } | null)?.ref?.();
  }

  private park(drawer: Drawer): void {
    const { child } = drawer;
    child.unref();
    child.channel?.unref();
    (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
    this.idle.push(drawer);
  }

  private stop({ child }: Drawer): void {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

function memoryError(mb: number): Invalid {
  return new Invalid(`Drawing this report needed more than ${mb.toLocaleString("en-US")} MB of memory and was stopped; draw one tab, fewer rows or a narrower image`);
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** A process's resident memory in MB (VmRSS), or null where /proc does not say (not Linux, or the process is gone). */
export function residentMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** This server's draw processes, one pool per process (shared by every bundled copy of this module). */
export const drawPool = processSingleton<ReportDrawer>("report draw processes", () => new DrawPool({ ...DRAW_PROCESS_LIMITS, maxProcesses: REPORT_QUEUE_LIMITS.total }));
