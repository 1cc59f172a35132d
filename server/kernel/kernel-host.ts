/**
 * The local kernel launcher without a host agent: each kernel on its own PTY,
 * a child of this server (tests of the kernel path, the bench). The lab's
 * hosts, the local one included, go through their host agent
 * (server/hosts/agent-kernel.ts) so kernels outlive a server restart.
 */
import { KernelChannel } from "./kernel-channel";
import type { KernelLauncher } from "./kernel-process";
import { chooseInterpreter } from "./python-interpreter";

export function localHost(python?: string): KernelLauncher {
  const choice = chooseInterpreter(python);
  const launchArgv = (bootstrap: string): string[] => [choice.executable, "-u", "-c", bootstrap];
  return {
    id: "local",
    label: "this machine",
    describe: () => `${choice.executable} (${choice.reason})`,
    start: async (events, options) => {
      const { channel, hello } = await KernelChannel.start({ launchArgv, hostId: "local", startTimeoutMs: options.startTimeoutMs, cwd: options.cwd }, events);
      return { process: channel, hello };
    },
  };
}
