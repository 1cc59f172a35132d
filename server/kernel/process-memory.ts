/**
 * Memory of a kernel's process tree on this machine, read from /proc (Linux).
 *
 * A kernel's tree is its own process, every descendant (by parent pid), and
 * every process still in its session: the kernel leads the session of its
 * PTY, so ranks and workers it started stay counted even when their parent
 * exited. Memory is the sum of each process's resident set (VmRSS in
 * /proc/<pid>/status): pages shared between processes (torch's libraries
 * in forked ranks) are counted once per process, so the sum can exceed what
 * the tree costs the machine; it never hides a process.
 *
 * One scan of /proc/<pid>/stat serves every kernel of a listing.
 */
import { readdir, readFile } from "node:fs/promises";

export const MEMORY_METHOD =
  "resident memory (VmRSS from /proc) summed over the kernel's process tree: the kernel, its descendants and its tty session; pages shared between processes are counted once per process";

export interface ProcessTreeMemory {
  rssBytes: number;
  /** Pids in the tree, the kernel's first. */
  pids: number[];
}

interface ProcEntry {
  pid: number;
  ppid: number;
  session: number;
}

export class ProcessTable {
  private constructor(private readonly entries: ReadonlyMap<number, ProcEntry>, private readonly procRoot: string) {}

  /** A snapshot of every process's parent and session; null where there is no /proc (not Linux). */
  static async read(procRoot = "/proc"): Promise<ProcessTable | null> {
    let names: string[];
    try {
      names = await readdir(procRoot);
    } catch (error) {
      if (isGone(error)) return null;
      throw error;
    }
    const entries = new Map<number, ProcEntry>();
    await Promise.all(
      names
        .filter((name) => /^\d+$/.test(name))
        .map(async (name) => {
          const stat = await readIfPresent(`${procRoot}/${name}/stat`);
          const entry = stat === null ? null : parseStat(stat);
          if (entry) entries.set(entry.pid, entry);
        }),
    );
    return new ProcessTable(entries, procRoot);
  }

  /** The tree of `rootPid` (see the header); null when that process is gone. */
  treeOf(rootPid: number): number[] | null {
    if (!this.entries.has(rootPid)) return null;
    const children = new Map<number, number[]>();
    for (const entry of this.entries.values()) {
      const siblings = children.get(entry.ppid);
      if (siblings) siblings.push(entry.pid);
      else children.set(entry.ppid, [entry.pid]);
    }
    const tree = new Set<number>([rootPid]);
    const todo = [rootPid];
    for (let pid = todo.pop(); pid !== undefined; pid = todo.pop()) {
      for (const child of children.get(pid) ?? []) {
        if (!tree.has(child)) {
          tree.add(child);
          todo.push(child);
        }
      }
    }
    for (const entry of this.entries.values()) if (entry.session === rootPid) tree.add(entry.pid);
    return [...tree];
  }

  /** Summed VmRSS of the tree of `rootPid`; null when that process is gone. */
  async memoryOf(rootPid: number): Promise<ProcessTreeMemory | null> {
    const pids = this.treeOf(rootPid);
    if (pids === null) return null;
    const sizes = await Promise.all(pids.map((pid) => this.rssOf(pid)));
    return { rssBytes: sizes.reduce((sum, bytes) => sum + bytes, 0), pids };
  }

  /** A process that exited since the scan counts as 0; kernel threads have no VmRSS line. */
  private async rssOf(pid: number): Promise<number> {
    const status = await readIfPresent(`${this.procRoot}/${pid}/status`);
    const match = status === null ? null : /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  }
}

/** "pid (comm) state ppid pgrp session …": comm may hold spaces and parentheses, so fields are read after its last ")". */
export function parseStat(stat: string): ProcEntry | null {
  const open = stat.indexOf("(");
  const close = stat.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const pid = Number(stat.slice(0, open).trim());
  const fields = stat.slice(close + 1).trim().split(/\s+/);
  const ppid = Number(fields[1]);
  const session = Number(fields[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(session)) return null;
  return { pid, ppid, session };
}

async function readIfPresent(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    // The process exited between listing /proc and reading it, or belongs to someone we may not read.
    if (isGone(error)) return null;
    throw error;
  }
}

function isGone(error: unknown): boolean {
  const code = error instanceof Error && "code" in error ? error.code : undefined;
  return code === "ENOENT" || code === "ESRCH" || code === "EACCES" || code === "EPERM";
}
