/**
 * Which processes on this machine have a file open (what `fuser` reads):
 * a SQLite lab's database is on the lab's own machine, so a running lab
 * server — or anything else using the file — is found here, exactly, with
 * no lock for a crashed server to leave behind.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

export interface OpenBy {
  pid: number;
  /** Its command line, shortened. */
  command: string;
}

/** Processes (other than this one) with one of `files` open; those whose descriptors this user may not read are not seen. */
export function processesWithOpen(files: readonly string[]): OpenBy[] {
  const wanted = new Set(files);
  const found: OpenBy[] = [];
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid);
  } catch {
    throw new Error("cannot list /proc to find the processes using the database (this check needs Linux)");
  }
  for (const pid of pids) {
    let descriptors: string[];
    try {
      descriptors = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // ended meanwhile, or another user's
    }
    const holds = descriptors.some((fd) => {
      try {
        return wanted.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
    if (holds) found.push({ pid: Number(pid), command: commandOf(pid) });
  }
  return found;
}

function commandOf(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ").slice(0, 160);
  } catch {
    return "?";
  }
}
