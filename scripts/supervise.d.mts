export const STOP_GRACE_MS: number;
export function supervise(options: {
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  startupMs?: number;
  maxRestarts?: number;
  windowMs?: number;
  stopGraceMs?: number;
  log?: (line: string) => void;
  onExit?: (code: number) => void;
}): { stop: (signal?: NodeJS.Signals) => void; restarts: () => number; pid: () => number | undefined };
export function groupAlive(group: number): boolean;
export function onStopRequest(stop: (reason: string) => void, options?: { watch?: number[] }): void;
export function npmAncestors(env?: Record<string, string | undefined>): number[];
