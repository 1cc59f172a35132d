/**
 * How the lab opens an agent link on each kind of host: the argv that
 * runs `<python> -u -c <bootstrap>` there (see core/protocol/agent-messages.ts).
 *
 * - local: the interpreter itself, on pipes (no PTY: agent-link.ts).
 * - ssh: `ssh -tt` with BatchMode (a password or host-key prompt would hang a
 *   PTY: ssh fails at once instead), keepalives (a dropped network ends the
 *   link within ~45 s), then the remote command as one argument.
 * - slurm: see SLURM below; every value from the config reaches a command line
 *   only as its own argv element or single-quoted, and host-config.ts has
 *   already refused values that could act as options.
 */
import { chooseInterpreter } from "../kernel/python-interpreter";
import type { HostConfig, HostKind, SlurmHostConfig, SshTarget } from "./host-config";
import { slurmScripts, type SlurmScripts } from "./slurm-scripts";

export interface HostTransport {
  readonly id: string;
  readonly label: string;
  readonly kind: HostKind;
  /** The argv that runs `<python> -u -c <bootstrap>` on the host. */
  launchArgv(bootstrap: string): string[];
  /** "pipes" for the local host (no terminal needed); a PTY otherwise (agent-link.ts). */
  readonly channel?: "pty" | "pipes";
  /** "alice@gpu1:2222 via bastion (ssh)", for the hosts page and errors. */
  describe(): string;
}

/** The interpreter a remote host runs when its config names none. */
export const REMOTE_PYTHON = "python3";
const SERVER_ALIVE = ["-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3"];

/** One word for a POSIX shell: plain when it is safe as is, else single-quoted. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The bootstrap travels single-quoted through the remote shell. By rule it has
 * no single quote (kernels/mgpulab_agent keeps it so), which keeps that quoting
 * trivially right: a bootstrap that breaks the rule is a bug, refused here.
 */
export function quoteBootstrap(bootstrap: string): string {
  if (bootstrap.includes("'")) throw new Error("the agent bootstrap must not contain a single quote (it is single-quoted on the remote command line)");
  if (bootstrap.includes("\0")) throw new Error("the agent bootstrap must not contain a NUL byte");
  return `'${bootstrap}'`;
}

/** `ssh -tt [options] -- destination` without the remote command. */
export function sshArgv(target: SshTarget): string[] {
  const argv = ["ssh", "-tt", "-o", "BatchMode=yes", "-o", `ConnectTimeout=${target.connectTimeoutSeconds}`];
  // ssh keeps the first value it reads for an option: the config's own options come before our keepalive defaults.
  for (const [key, value] of Object.entries(target.options)) argv.push("-o", `${key}=${value}`);
  argv.push(...SERVER_ALIVE);
  if (target.jumpHost) argv.push("-J", target.jumpHost);
  if (target.identityFile) argv.push("-i", target.identityFile, "-o", "IdentitiesOnly=yes");
  if (target.port !== null) argv.push("-p", String(target.port));
  if (target.user) argv.push("-l", target.user);
  // "--": whatever follows is the destination, never an option (host-config.ts refuses a leading "-" too).
  argv.push("--", target.host);
  return argv;
}

export function describeSsh(target: SshTarget): string {
  const where = `${target.user ? `${target.user}@` : ""}${target.host}${target.port !== null ? `:${target.port}` : ""}`;
  return target.jumpHost ? `${where} via ${target.jumpHost}` : where;
}

class LocalTransport implements HostTransport {
  readonly kind = "local";
  readonly channel = "pipes";
  readonly id: string;
  readonly label: string;
  private readonly python: string;
  private readonly reason: string;

  constructor(host: HostConfig, localPython: string | undefined) {
    this.id = host.id;
    this.label = host.label;
    const choice = chooseInterpreter(host.python ?? localPython);
    this.python = choice.executable;
    this.reason = host.python ? "set in the hosts file" : choice.reason;
  }

  launchArgv(bootstrap: string): string[] {
    return [this.python, "-u", "-c", bootstrap];
  }

  describe(): string {
    return `${this.python} on this machine (${this.reason})`;
  }
}

class SshTransport implements HostTransport {
  readonly kind = "ssh";
  readonly id: string;
  readonly label: string;

  constructor(
    host: HostConfig,
    private readonly target: SshTarget,
    private readonly python: string,
  ) {
    this.id = host.id;
    this.label = host.label;
  }

  launchArgv(bootstrap: string): string[] {
    return [...sshArgv(this.target), `${shellQuote(this.python)} -u -c ${quoteBootstrap(bootstrap)}`];
  }

  describe(): string {
    return `${describeSsh(this.target)} (ssh)`;
  }
}

/**
 * SLURM. What happens to a daemon that double-forks and setsid()s out of a
 * `srun --pty` step when the link drops (measured on Debian 12's Slurm 22.05,
 * tests/integration/slurm-transport.test.ts):
 * - ProctrackType=proctrack/pgid: it survives (it left the step's process group).
 * - ProctrackType=proctrack/cgroup, the usual setting (and what a site that
 *   counts GPU memory or uses pam_slurm_adopt runs): it is killed. The step is
 *   cancelled as soon as its srun client goes (SIGHUP or SIGKILL alike), and
 *   every process in the step's cgroup goes with it; nothing a process in the
 *   step does (setsid, a subreaper that ignores SIGHUP) keeps it alive. Overlapping
 *   steps in a `salloc --no-shell` allocation die the same way.
 * So an agent must not live in a link's step. It lives in the batch step of its
 * own allocation, which runs as long as its script: `sbatch --job-name=mgpulab-<host id>`
 * runs the keeper (kernels/mgpulab_slurm/keeper.py); each link is an overlapping
 * step, `srun --jobid=J --overlap --pty <python> -c <connector> … <python> -u -c <bootstrap>`,
 * whose connector asks the keeper to run the bootstrap in a PTY of the batch
 * step. The daemon the bootstrap detaches is then the keeper's (a subreaper),
 * survives the link, and the next link finds the job again by its name. When
 * no link and no daemon is left for `keeperIdleSeconds`, the keeper exits and
 * the allocation (and its GPUs) is released.
 * The script below runs where sbatch does (here, or on the login node).
 */
const SLURM_LAUNCH = [
  "set -eu",
  'name=$1 python=$2 keeper=$3 connector=$4 dir=$5 idle=$6 bootstrap=$7 gpus=$8',
  "shift 8",
  'job=$(squeue --noheader --me --name="$name" --states=PENDING,CONFIGURING,RUNNING --format=%i | head -n 1)',
  'if [ -z "$job" ]; then',
  '  if [ "$gpus" -gt 0 ]; then set -- "--gres=gpu:$gpus" "$@"; fi',
  // The values inside --wrap were checked to hold no single quote (host-config.ts); the stubs are base64.
  `  job=$(sbatch --parsable --job-name="$name" --nodes=1 --ntasks=1 --output=/dev/null "$@" --wrap="exec '$python' -u -c '$keeper' '$dir' $idle")`,
  '  job=${job%%;*}',
  '  echo "mgpulab: started Slurm job $job to hold the agent" >&2',
  "fi",
  "said=",
  "while :; do",
  '  state=$(squeue --noheader --jobs="$job" --format=%T 2>/dev/null || true)',
  '  case "$state" in',
  "    RUNNING) break ;;",
  '    PENDING|CONFIGURING) [ -n "$said" ] || echo "mgpulab: waiting for Slurm job $job ($state)" >&2; said=1; sleep 1 ;;',
  '    *) echo "mgpulab: Slurm job $job is ${state:-gone}" >&2; exit 1 ;;',
  "  esac",
  "done",
  'exec srun --jobid="$job" --overlap --nodes=1 --ntasks=1 --pty "$python" -u -c "$connector" "$dir" 60 "$python" -u -c "$bootstrap"',
].join("\n");

/** How long a keeper with no link and no daemon holds its allocation (the first link comes right after the job starts). */
export const KEEPER_IDLE_SECONDS = 120;

export function slurmJobName(hostId: string): string {
  return `mgpulab-${hostId}`;
}

class SlurmTransport implements HostTransport {
  readonly kind = "slurm";
  readonly id: string;
  readonly label: string;

  constructor(
    private readonly host: SlurmHostConfig,
    private readonly python: string,
    private readonly scripts: SlurmScripts,
    private readonly keeperIdleSeconds: number,
  ) {
    this.id = host.id;
    this.label = host.label;
  }

  launchArgv(bootstrap: string): string[] {
    const quoted = quoteBootstrap(bootstrap);
    const args = [
      slurmJobName(this.host.id),
      this.python,
      this.scripts.keeper,
      this.scripts.connector,
      this.host.runtimeDir ?? "",
      String(this.keeperIdleSeconds),
      bootstrap,
      String(this.host.slurm.gpusPerAgent),
      ...this.host.slurm.sbatchArgs,
    ];
    const login = this.host.slurm.login;
    if (!login) return ["sh", "-c", SLURM_LAUNCH, "mgpulab-slurm", ...args];
    const words = args.map((arg) => (arg === bootstrap ? quoted : shellQuote(arg)));
    return [...sshArgv(login), ["sh", "-c", shellQuote(SLURM_LAUNCH), "mgpulab-slurm", ...words].join(" ")];
  }

  describe(): string {
    const gres = this.host.slurm.gpusPerAgent > 0 ? ` --gres=gpu:${this.host.slurm.gpusPerAgent}` : "";
    const via = this.host.slurm.login ? ` via ${describeSsh(this.host.slurm.login)}` : "";
    return `Slurm job ${slurmJobName(this.host.id)}${gres}${via} (slurm)`;
  }
}

export interface TransportOptions {
  /** The Slurm keeper and connector code (tests give a checkout's own). */
  slurmScripts?: SlurmScripts;
  keeperIdleSeconds?: number;
}

export function transportFor(host: HostConfig, localPython?: string, options: TransportOptions = {}): HostTransport {
  switch (host.kind) {
    case "local":
      return new LocalTransport(host, localPython);
    case "ssh":
      return new SshTransport(host, host.ssh, host.python ?? REMOTE_PYTHON);
    case "slurm":
      return new SlurmTransport(host, host.python ?? REMOTE_PYTHON, options.slurmScripts ?? slurmScripts(), options.keeperIdleSeconds ?? KEEPER_IDLE_SECONDS);
  }
}
