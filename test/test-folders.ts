import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Each test file's data folder is a fresh `<root>/quarry-test-XXXXXX`. */
export const TEST_FOLDER_PREFIX = "quarry-test-";
/** Longer than any test file runs: a folder this old was left by a run that was killed before its afterAll. */
const LEFT_BEHIND_MS = 12 * 3_600_000;

/**
 * Where each test file's data folder goes (test/setup-file.ts): a memory file system when the machine has one
 * (/dev/shm), else the system's temporary folder. Every file copies the seeded template there and removes it after;
 * on a disk under load the copy and removal alone took 5.4–7.3 s per file, in memory 0.8–1.0 s (measured in vitest at
 * load 21–25, 88 MB). A kill -9 of an engine, what the fault
 * tests do, keeps what it wrote in either; only a machine crash would not, and no test crashes the machine.
 */
export function testFolderRoot(): string {
  const memory = "/dev/shm";
  try {
    fs.accessSync(memory, fs.constants.W_OK);
    // A container's /dev/shm is often 64 MB: too small for two workers' copies (56 MB each) and their growth.
    const { bavail, bsize } = fs.statfsSync(memory);
    return bavail * bsize >= MEMORY_ROOT_MIN_BYTES ? memory : os.tmpdir();
  } catch {
    return os.tmpdir();
  }
}

/** Free space /dev/shm must have to hold the test folders: two workers' copies with room to grow, several times over. */
const MEMORY_ROOT_MIN_BYTES = 2 * 1024 ** 3;

/** Test folders of runs that were killed (in memory they would hold it until the machine restarts). */
export function removeLeftBehindTestFolders(): void {
  const root = testFolderRoot();
  for (const entry of fs.readdirSync(root)) {
    if (!entry.startsWith(TEST_FOLDER_PREFIX)) continue;
    const dir = path.join(root, entry);
    try {
      if (Date.now() - fs.statSync(dir).mtimeMs > LEFT_BEHIND_MS) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // Removed meanwhile by the run that made it.
    }
  }
}
