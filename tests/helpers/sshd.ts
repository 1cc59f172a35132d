/**
 * A private sshd on 127.0.0.1 (Debian's openssh-server): a real remote host for
 * the ssh transport. Its own host key, client key, authorized_keys and pid file
 * live in a temp dir; it accepts only that key, for the user running the tests
 * (root here: PermitRootLogin prohibit-password).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { descendants, exited, freePort, signal, startDaemon } from "./daemons";
import { ensureDebianPackages } from "./debian-packages";

const SSHD = "/usr/sbin/sshd";

export interface TestSshd {
  port: number;
  user: string;
  identityFile: string;
  knownHostsFile: string;
  /** `-o` options a client needs for this server: its known_hosts, strict checking, nothing global. */
  sshOptions(): Record<string, string>;
  /** Ends sshd and every session it serves. */
  stop(): Promise<void>;
  /** SIGKILL to sshd and its sessions: the clients' connections drop as on a dead network peer. */
  kill(): Promise<void>;
}

/** null when sshd can run here; else why not (the test file skips with it). */
export function sshdUnavailable(): string | null {
  return ensureDebianPackages(["openssh-server", "openssh-client"]);
}

function keygen(file: string): void {
  const result = spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "mgpulab-test", "-f", file], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`ssh-keygen failed: ${result.stderr}`);
}

export async function startSshd(): Promise<TestSshd> {
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-sshd-"));
  const hostKey = path.join(dir, "host_key");
  const identityFile = path.join(dir, "client_key");
  keygen(hostKey);
  keygen(identityFile);
  writeFileSync(path.join(dir, "authorized_keys"), readFileSync(`${identityFile}.pub`), { mode: 0o600 });
  const port = await freePort();
  const knownHostsFile = path.join(dir, "known_hosts");
  const [type, key] = readFileSync(`${hostKey}.pub`, "utf8").split(" ");
  writeFileSync(knownHostsFile, `[127.0.0.1]:${port} ${type} ${key}\n`);
  const config = path.join(dir, "sshd_config");
  writeFileSync(
    config,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${path.join(dir, "authorized_keys")}`,
      `PidFile ${path.join(dir, "sshd.pid")}`,
      "UsePAM no",
      "StrictModes no",
      "PermitRootLogin prohibit-password",
      "PubkeyAuthentication yes",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "X11Forwarding no",
      "PrintMotd no",
      "PrintLastLog no",
      "LogLevel INFO",
      "",
    ].join("\n"),
  );
  // As root, sshd insists on its privilege separation directory (the package's service would create it).
  if (process.getuid?.() === 0) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const daemon = await startDaemon([SSHD, "-D", "-e", "-f", config], /Server listening on 127\.0\.0\.1 port \d+/);
  const pid = daemon.child.pid ?? 0;
  let ended = false;
  const end = async (sig: NodeJS.Signals) => {
    if (ended) return;
    ended = true;
    // Sessions are sshd's children (each in its own session), so they are found by tree, not group.
    signal([...descendants(pid), pid], sig);
    await exited(daemon.child);
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    port,
    user: userInfo().username,
    identityFile,
    knownHostsFile,
    sshOptions: () => ({ UserKnownHostsFile: knownHostsFile, GlobalKnownHostsFile: "/dev/null", StrictHostKeyChecking: "yes", LogLevel: "ERROR" }),
    stop: () => end("SIGTERM"),
    kill: () => end("SIGKILL"),
  };
}
