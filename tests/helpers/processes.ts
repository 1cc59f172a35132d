/** Other processes as the tests see them: alive or not, and waiting on what they do. */
import { readFileSync } from "node:fs";

/** A process that exists and is not a zombie (a container's init may be slow to reap what it inherits). */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Polls a condition the test cannot be told about (another process's exit), with a deadline. */
export async function waitUntil(test: () => boolean, limitMs: number, what: string): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
