// CPU time spent by this process, its child processes (the embedded engine) and, when the database is a
// PostgreSQL server on this machine, the server's processes: what a run cost the machine, beside its wall time.
// Linux only (/proc); elsewhere cpuSeconds() answers null and benches leave the figure out.
import fs from "node:fs";
import os from "node:os";

/** USER_HZ, the unit of /proc/<pid>/stat times: 100 on Linux. */
const TICKS_PER_SECOND = 100;

/** utime + stime of one /proc/<pid>/stat, in seconds, and its parent's pid and command name. */
function readStat(pid: string): { seconds: number; ppid: string; name: string } | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND, ppid: fields[1], name };
  } catch {
    return null; // the process ended meanwhile
  }
}

/**
 * Seconds of CPU used so far by this process (all its threads: the tsvector calculator, extraction
 * workers), its children, and (withPostgres) every process named postgres. Processes that end between
 * two readings take their time with them, so compare readings around work during which none ends.
 */
export function cpuSeconds(withPostgres: boolean): number | null {
  if (!fs.existsSync("/proc/self/stat")) return null;
  let total = 0;
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = readStat(pid);
    if (!stat) continue;
    if (pid === String(process.pid) || stat.ppid === String(process.pid) || (withPostgres && stat.name === "postgres")) total += stat.seconds;
  }
  return total;
}

/** The cores work can run on at once. */
export const cores = (): number => os.availableParallelism();
