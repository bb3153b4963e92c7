/**
 * Time bounds for tests, derived from what the machine can do right now (issue 47 §4). CI may run while the
 * machine is busy: a fixed wall-clock bound written on a quiet machine then fails a test that is merely slow
 * (a fault test's ten kill-and-restart rounds did not fit 300 s at load 8).
 *
 * The reference operation is a busy loop timed twice, on the wall clock and in this process's CPU time
 * (process.cpuUsage): their ratio is how many wall-clock milliseconds one millisecond of CPU work takes here
 * now, 1 on a quiet machine and about load ÷ cores once the cores are oversubscribed. Load comes in bursts, so
 * the slowest of a few samples counts. A bound written for a quiet machine is multiplied by it.
 */
const SAMPLE_MS = 100;
const SAMPLES = 3;

function sample(): number {
  const wallStart = performance.now();
  const cpuStart = process.cpuUsage();
  let sink = 0;
  while (performance.now() - wallStart < SAMPLE_MS) sink += Math.sqrt(sink + 1);
  const cpu = process.cpuUsage(cpuStart);
  const cpuMs = (cpu.user + cpu.system) / 1_000;
  // A process descheduled for the whole sample got no CPU at all: as slow as the sample can tell.
  return cpuMs > 0 && Number.isFinite(sink) ? (performance.now() - wallStart) / cpuMs : SAMPLE_MS;
}

/** Wall-clock milliseconds per millisecond of CPU work on this machine now (≥ 1); measure it at the test's start. */
export function measurePace(): number {
  let slowest = 1;
  for (let i = 0; i < SAMPLES; i++) slowest = Math.max(slowest, sample());
  return slowest;
}

/** `quietMs`, a bound that holds on a quiet machine, stretched by `pace`. */
export const paced = (quietMs: number, pace: number): number => Math.ceil(quietMs * pace);
