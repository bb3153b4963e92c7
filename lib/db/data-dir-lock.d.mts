import type net from "node:net";

/** What a lock holder says about itself when probed. */
export interface LockHolder {
  pid: number;
  process?: string;
  since?: string;
  host?: string;
  /** Answered by an embedded engine whose server is gone. */
  stopping?: boolean;
  enginePid?: number;
}

export const LOCK_FILE: string;
export const STOPPING_WAIT_MS: number;

export class DataDirLocked extends Error {
  readonly dir: string;
  readonly holder: LockHolder | undefined;
  constructor(dir: string, holder: LockHolder | undefined);
}

export interface DataDirLock {
  readonly dir: string;
  readonly holder: LockHolder;
  release(): void;
}

export function lockDataDir(dir: string, options?: { processName?: string; waitMs?: number }): Promise<DataDirLock>;

/** The lock this process holds on `dir` or a folder containing it: its listening socket, to pass to engine processes. */
export function heldDataDirLock(dir: string): { dir: string; server: net.Server; holder: LockHolder } | undefined;

export function probeDataDirLock(dir: string): Promise<{ state: "alive"; holder: LockHolder | undefined } | { state: "stale" } | { state: "absent" }>;
