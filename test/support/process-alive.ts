/** Whether a process exists (a zombie included, until its parent reaps it). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
