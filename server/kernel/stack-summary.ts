/**
 * One line per process for a hang report ("rank 0: in all_reduce
 * (distributed_c10d.py:2050)"), read from either stack format the lab sees:
 * Python's traceback (most recent call last) or faulthandler's (most recent
 * call first).
 */
export interface ProcessStack {
  label: string;
  pid: number;
  alive: boolean;
  stack: string;
}

const TRACEBACK_FRAME = /^\s*File "([^"]+)", line (\d+), in (.+)$/;
const FAULTHANDLER_FRAME = /^\s*File "([^"]+)", line (\d+) in (.+)$/;

export interface StackFrame {
  file: string;
  line: number;
  func: string;
  /** The source line, when the stack shows it (Python's format does, faulthandler's does not). */
  code: string | null;
}

export function innermostFrame(stack: string): StackFrame | null {
  const lines = stack.split("\n");
  const firstThread = takeFirstThread(lines);
  const mostRecentFirst = firstThread.some((line) => /most recent call first/.test(line));
  const frames = firstThread.flatMap((line, index) => {
    const match = TRACEBACK_FRAME.exec(line) ?? FAULTHANDLER_FRAME.exec(line);
    if (!match) return [];
    const next = firstThread[index + 1];
    const code = next !== undefined && /^\s{4,}\S/.test(next) && !/^\s*File "/.test(next) ? next.trim() : null;
    return [{ file: match[1]!, line: Number(match[2]), func: match[3]!.trim(), code }];
  });
  if (frames.length === 0) return null;
  return mostRecentFirst ? frames[0]! : frames[frames.length - 1]!;
}

export function summarizeProcess(process: ProcessStack): string {
  if (!process.alive) return `${process.label}: exited`;
  const frame = innermostFrame(process.stack);
  if (!frame) return `${process.label}: no Python stack`;
  const where = `${process.label}: in ${frame.func} (${frame.file.split("/").pop()}:${frame.line})`;
  return frame.code ? `${where}: ${frame.code}` : where;
}

/** faulthandler prints the current thread first ("Current thread 0x… (most recent call first)"); Python's format puts the main thread first. */
function takeFirstThread(lines: string[]): string[] {
  const starts = lines.flatMap((line, index) => (/^(Current thread|Thread) /.test(line) ? [index] : []));
  if (starts.length === 0) return lines;
  const current = lines.findIndex((line) => line.startsWith("Current thread"));
  const start = current !== -1 ? current : starts[0]!;
  const end = starts.find((index) => index > start) ?? lines.length;
  return lines.slice(start, end);
}
