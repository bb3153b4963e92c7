export function supervise(options: {
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  startupMs?: number;
  maxRestarts?: number;
  windowMs?: number;
  log?: (line: string) => void;
  onExit?: (code: number) => void;
}): { stop: (signal?: NodeJS.Signals) => void; restarts: () => number };
