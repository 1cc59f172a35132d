/**
 * Runs the real lab server (server/main.ts, production Next build) as a child
 * process on a free port, and waits for its "listening" log line.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { rememberSession, signInWithToken } from "./lab-session";

const ROOT = path.resolve(__dirname, "..", "..");

export class LabServer {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
    readonly logs: string[],
    /** The local admin's session cookie (signed in through the printed token URL); null when the lab printed none. */
    readonly cookie: string | null,
    /** The one-time sign-in URL the lab printed (already used for `cookie`). */
    readonly signInUrl: string | null,
  ) {}

  /**
   * `env.MGPULAB_DATA_DIR` reopens a database; without it each server gets a fresh temp one (never ./data).
   * `signIn`: open the printed token URL as the local admin and remember the session for this lab's clients.
   * `nodeArgs`: more options for node itself (a benchmark's `--cpu-prof`).
   */
  static async start(env: Record<string, string> = {}, limitMs = 60_000, { signIn = true, nodeArgs = [] }: { signIn?: boolean; nodeArgs?: string[] } = {}): Promise<LabServer> {
    const dataDir = env.MGPULAB_DATA_DIR ?? mkdtempSync(path.join(tmpdir(), "mgpulab-server-"));
    const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", "server/main.ts"], {
      cwd: ROOT,
      // Kernels outlive a stopped server for the agent's lease: short in tests, so a stopped test server leaves nothing running for long.
      env: {
        ...process.env,
        NODE_ENV: "production",
        PORT: "0",
        HOST: "127.0.0.1",
        MGPULAB_KERNEL_LEASE_SECONDS: "15",
        MGPULAB_AGENT_RUNTIME_DIR: path.join(dataDir, "agents"),
        ...env,
        MGPULAB_DATA_DIR: dataDir,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const logs: string[] = [];
    let signInUrl: string | null = null;
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start in ${limitMs} ms:\n${logs.join("\n")}`)), limitMs);
      createInterface({ input: child.stderr! }).on("line", (line) => logs.push(line));
      createInterface({ input: child.stdout! }).on("line", (line) => {
        logs.push(line);
        if (!line.includes('"listening"')) return;
        const parsed = JSON.parse(line) as { url?: string; signInUrl?: string };
        if (parsed.url) {
          signInUrl = parsed.signInUrl ?? null;
          clearTimeout(timer);
          resolve(parsed.url);
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`server exited with ${code}:\n${logs.join("\n")}`));
      });
    });
    const cookie = signIn && signInUrl !== null ? await signInWithToken(signInUrl) : null;
    if (cookie !== null) rememberSession(url, cookie);
    return new LabServer(url, child, logs, cookie, signIn ? null : signInUrl);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Stops the server the way an operator would (SIGTERM), or abruptly (SIGKILL). */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.kill(signal);
    await exited;
  }
}
