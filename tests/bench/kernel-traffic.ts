/**
 * One kernel's traffic figures, as every kernel benchmark measures them:
 * trivial round trips, then output throughput twice, then a new kernel's
 * first flood. The first flood is the figure recorded since the first
 * benchmark; the second ("warm") shows what the first paid for warm-up: a
 * host agent's kernel runs at nice 19 and yields the CPU while the lab's own
 * processes warm up their output path, and (until it yielded as a kernel does)
 * the agent's version probe imported torch beside it (BENCHMARKS.md, issue 29,
 * seventh round). The third
 * tells those apart: a new kernel (new process, PTY and agent state) in a lab
 * process that has relayed a flood before, as every kernel of a running
 * server but the first meets it.
 */
import type { KernelLaunch } from "../../server/kernel/kernel-session";
import { TestKernel } from "../helpers/test-kernel";

export interface TrafficFigures {
  /** Sorted round trips of `1`, in ms. */
  latencies: number[];
  /** The first flood of `megabytes` after the round trips. */
  throughputMBps: number;
  /** The same flood again, right after. */
  warmThroughputMBps: number;
  /** The first flood of a new kernel started after those two (the lab's side is warm, the kernel is not). */
  newKernelThroughputMBps: number;
  bytesReceived: number;
}

/** A kernel past its first cells (the first few after a start are slower on either side). */
async function startWarmed(launch: () => KernelLaunch): Promise<TestKernel> {
  const kernel = await TestKernel.start({ launch });
  for (let i = 0; i < 20; i++) await kernel.run("1");
  return kernel;
}

export async function measureTraffic(launch: () => KernelLaunch, rounds: number, megabytes: number): Promise<TrafficFigures> {
  const kernel = await startWarmed(launch);
  const latencies: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const begin = performance.now();
    await kernel.run("1");
    latencies.push(performance.now() - begin);
  }
  latencies.sort((a, b) => a - b);

  const first = await flood(kernel, megabytes);
  const warm = await flood(kernel, megabytes);
  await kernel.close();
  const next = await startWarmed(launch);
  const newKernel = await flood(next, megabytes);
  await next.close();
  return { latencies, throughputMBps: first.mbps, warmThroughputMBps: warm.mbps, newKernelThroughputMBps: newKernel.mbps, bytesReceived: first.bytes };
}

/** Prints `megabytes` MB in 1,000-byte lines; MB/s as the bytes arrive. */
async function flood(kernel: TestKernel, megabytes: number): Promise<{ mbps: number; bytes: number }> {
  // Count bytes as they arrive, as a viewer would, instead of keeping them.
  const begin = performance.now();
  const received = await new Promise<number>((resolve) => {
    let bytes = 0;
    kernel.session.execute(`import sys\nline = 'x' * 999 + '\\n'\nfor _ in range(${megabytes * 1000}):\n    sys.stdout.write(line)\nsys.stdout.flush()`, {
      started: () => undefined,
      console: (text) => {
        bytes += Buffer.byteLength(text, "utf8");
      },
      output: () => undefined,
      finished: () => resolve(bytes),
    });
  });
  const seconds = (performance.now() - begin) / 1000;
  return { mbps: received / 1e6 / seconds, bytes: received };
}
