/** A transport's argv run in a real PTY (server/kernel/pty-process.ts), with waits on what it prints. */
import { cleanEnvironment, PtyProcess, type PtyExit } from "../../server/kernel/pty-process";

/** A tiny stand-in for the agent bootstrap: prints a marker, reads one line, answers it reversed. No single quote, as the rule says. */
export const ECHO_BOOTSTRAP = [
  "import os, sys",
  'sys.stdout.write("LINK-" + "READY pid=%d\\n" % os.getpid())',
  "line = sys.stdin.readline().strip()",
  'sys.stdout.write("ECHO:" + line[::-1] + "\\n")',
  "sys.stdin.readline()",
].join("\n");

export class PtyLink {
  readonly pty: PtyProcess;
  private text = "";
  private readonly waiters: Array<() => void> = [];
  exit: PtyExit | null = null;

  constructor(argv: string[], env: Record<string, string> = {}) {
    this.pty = new PtyProcess(
      { argv, env: cleanEnvironment(env) },
      (bytes) => {
        this.text += bytes.toString("utf8");
        for (const wake of this.waiters.splice(0)) wake();
      },
      (exit) => {
        this.exit = exit;
        for (const wake of this.waiters.splice(0)) wake();
      },
    );
  }

  output(): string {
    return this.text;
  }

  /** Resolves with the first match of `pattern` in the output; rejects if the PTY ends or the time runs out first. */
  waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${this.text}`)), timeoutMs);
      const check = () => {
        const match = this.text.match(pattern);
        if (match) {
          clearTimeout(timer);
          resolve(match);
        } else if (this.exit) {
          clearTimeout(timer);
          reject(new Error(`the PTY ended (${JSON.stringify(this.exit)}) before ${pattern}; output:\n${this.text}`));
        } else {
          this.waiters.push(check);
        }
      };
      check();
    });
  }

  write(text: string): void {
    this.pty.write(text);
  }
}
