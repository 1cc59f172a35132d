/**
 * A kernel host is a launch command template: where and how a kernel's
 * bootstrap runs (local python3 now; `ssh -tt host python3 -c …` or
 * `srun --pty …` for GPU hosts).
 */
import { chooseInterpreter } from "./python-interpreter";

export interface KernelHost {
  id: string;
  label: string;
  /** The argv that runs `python -c <bootstrap>` on that host, inside the PTY. */
  launchArgv(bootstrap: string): string[];
  /** Which interpreter, and why: shown to the user. */
  describe(): string;
}

export function localHost(python?: string): KernelHost {
  const choice = chooseInterpreter(python);
  return {
    id: "local",
    label: "this machine",
    launchArgv: (bootstrap) => [choice.executable, "-u", "-c", bootstrap],
    describe: () => `${choice.executable} (${choice.reason})`,
  };
}
