/**
 * What a host agent's health reports say of GPU use: the last report and
 * when it came, and each kernel's utilisation (the highest of its GPUs) at
 * the last sample, kept current by kernel states too. Separate from
 * HostAgent: the figures the hosts page and the idle shutdown read.
 */
import type { AgentKernel, AgentMessageOf } from "../core/protocol/agent-messages";

export class AgentGpuUse {
  private lastReport: { report: AgentMessageOf<"health">; at: number } | null = null;
  private readonly utilization = new Map<string, number | null>();

  /** The last health report and when it came (null before the first). */
  get lastHealth(): { report: AgentMessageOf<"health">; at: number } | null {
    return this.lastReport;
  }

  /** A health report: each kernel's utilisation is the highest of its GPUs'. */
  health(report: AgentMessageOf<"health">, at = Date.now()): void {
    this.lastReport = { report, at };
    const byKernel = new Map<string, number>();
    for (const gpu of report.gpus) {
      if (gpu.kernel !== null && gpu.utilization !== null) byKernel.set(gpu.kernel, Math.max(byKernel.get(gpu.kernel) ?? 0, gpu.utilization));
    }
    for (const [kernel, utilization] of byKernel) this.utilization.set(kernel, utilization);
  }

  /** A kernel's state says its utilisation too; an ended kernel has none. */
  kernelState(kernel: AgentKernel): void {
    if (kernel.state === "exited") this.utilization.delete(kernel.kernel);
    else this.utilization.set(kernel.kernel, kernel.gpuUtilization);
  }

  /** A kernel's GPU utilisation (percent, highest of its GPUs) at the last sample; null without GPUs or NVML. */
  of(kernelId: string): number | null {
    return this.utilization.get(kernelId) ?? null;
  }
}
