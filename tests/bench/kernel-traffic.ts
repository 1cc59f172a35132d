/** One kernel's traffic figures, as every kernel benchmark measures them: trivial round trips, then output throughput. */
import type { KernelLaunch } from "../../server/kernel/kernel-session";
import { TestKernel } from "../helpers/test-kernel";

export interface TrafficFigures {
  /** Sorted round trips of `1`, in ms. */
  latencies: number[];
  throughputMBps: number;
  bytesReceived: number;
}

export async function measureTraffic(launch: () => KernelLaunch, rounds: number, megabytes: number): Promise<TrafficFigures> {
  const kernel = await TestKernel.start({ launch });
  for (let i = 0; i < 20; i++) await kernel.run("1");
  const latencies: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const begin = performance.now();
    await kernel.run("1");
    latencies.push(performance.now() - begin);
  }
  latencies.sort((a, b) => a - b);

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
  await kernel.close();
  return { latencies, throughputMBps: received / 1e6 / seconds, bytesReceived: received };
}
