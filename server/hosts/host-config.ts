/**
 * Which hosts the lab runs kernels on: a JSON file (MGPULAB_HOSTS_FILE, else
 * `<dataDir>/hosts.json` when present), else only this machine. The file is
 * read at start (and again on SIGHUP) and checked whole: every problem is
 * reported with the file and the field (`hosts.json: hosts[1].ssh.port: …`),
 * unknown keys are errors (a typo must not silently fall back to a default),
 * and every value that ends up on an ssh or sbatch command line is checked so
 * that a config cannot smuggle in an option of its own (see host-transport.ts).
 *
 * One bad host entry never takes the lab down: it is left out, with its
 * problems (`problems`), and every other host serves. What makes the whole
 * file unusable — not JSON (said with line and column), a wrong top-level
 * field — is a HostsConfigError.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { hostGpuSchema, type HostGpu } from "../core/protocol/agent-messages";
import { findJsonSyntaxError } from "./json-syntax";
import { errorMessage } from "../core/errors";

export type HostKind = "local" | "ssh" | "slurm";

interface HostCommon {
  /** /^[a-z0-9][a-z0-9-]{0,30}$/; "local" is the local host's and only its. */
  id: string;
  /** Shown in the UI. */
  label: string;
  kind: HostKind;
  /** The interpreter on the host; null: `python3` remotely, chooseInterpreter() locally. */
  python: string | null;
  /** "auto": the agent discovers them; "none": CPU only; else the GPUs (or MIG slices) declared. */
  gpus: "auto" | "none" | HostGpu[];
  whenFull: "queue" | "refuse";
  /** How long an agent outlives its last link (config key `leaseMinutes`). */
  leaseSeconds: number;
  /** How long a cell gets after SIGINT (config key `interruptGraceSeconds`). */
  interruptGraceMs: number;
  /** Where the agent keeps its socket and code on the host; null: the agent's default. */
  runtimeDir: string | null;
  /** At most this many GPUs per kernel; null: all the host has (unknown before discovery with "auto"). */
  maxGpusPerKernel: number | null;
}

export interface SshTarget {
  /** An ssh destination or ~/.ssh/config alias. */
  host: string;
  user: string | null;
  port: number | null;
  /** `~` already expanded. */
  identityFile: string | null;
  /** ssh -J: `[user@]host[:port]`, comma-separated hops. */
  jumpHost: string | null;
  /** Extra `-o Key=value` options. */
  options: Record<string, string>;
  connectTimeoutSeconds: number;
}

export interface LocalHostConfig extends HostCommon {
  kind: "local";
}
export interface SshHostConfig extends HostCommon {
  kind: "ssh";
  ssh: SshTarget;
}
export interface SlurmHostConfig extends HostCommon {
  kind: "slurm";
  slurm: {
    /** Allocation options (partition, time, account…) given to sbatch, which shares them with srun. */
    sbatchArgs: string[];
    gpusPerAgent: number;
    /** Submit through this login node; null: sbatch/srun run on the lab's machine. */
    login: SshTarget | null;
  };
}
export type HostConfig = LocalHostConfig | SshHostConfig | SlurmHostConfig;

/** A host entry left out because it fails its check. */
export interface HostProblem {
  /** Its id when it has a usable one (a notebook on it is told why it cannot start), else where it is: "hosts[3]". */
  id: string;
  /** Every problem of the entry, each naming the file and the field. */
  errors: string[];
}

export interface HostsConfig {
  file: string | null;
  /** Always contains the local host (added when the file has none, or when its entry is left out). */
  hosts: HostConfig[];
  /** Entries left out, with why. */
  problems: HostProblem[];
  defaultHost: string;
  healthIntervalSeconds: number;
  idle: { minutes: number; gpuUtilizationPercent: number; warnMinutes: number };
}

export class HostsConfigError extends Error {
  override name = "HostsConfigError";
}

export const HOST_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,30}$/;
export const LOCAL_HOST_ID = "local";
const DEFAULT_LEASE_MINUTES = 10;
const DEFAULT_INTERRUPT_GRACE_SECONDS = 5;
const DEFAULT_CONNECT_TIMEOUT_SECONDS = 10;

// ── value rules: what may reach an ssh or sbatch command line ──

/** No control characters at all: a newline in a value would end a command or a config line. */
const CONTROL = /[\u0000-\u001f\u007f]/;
const text = (max: number) =>
  z
    .string({ error: "expected a string" })
    .min(1, { error: "must not be empty" })
    .max(max, { error: `at most ${max} characters` })
    .refine((value) => !CONTROL.test(value), { error: "must not contain control characters (newlines, tabs…)" });
/** A value that becomes an ssh argument after a flag: a leading "-" would make it an option of its own. */
const notOption = (max: number) => text(max).refine((value) => !value.startsWith("-"), { error: 'must not start with "-"' });

const sshHostName = notOption(253).regex(/^[A-Za-z0-9._:%[\]-]+$/, { error: "expected a host name, address or ~/.ssh/config alias" });
const sshUser = notOption(64).regex(/^[A-Za-z0-9._][A-Za-z0-9._-]*$/, { error: "expected a user name (letters, digits, . _ -)" });
const jumpHost = notOption(500).regex(/^[A-Za-z0-9._@:%[\],-]+$/, { error: "expected [user@]host[:port], comma-separated hops" });
/** Options the transport sets itself: BatchMode must stay on (a password prompt would hang a PTY), the rest have fields. */
const RESERVED_SSH_OPTIONS = ["batchmode", "connecttimeout", "identityfile", "identitiesonly", "port", "user", "proxyjump", "hostname"];
const sshOptions = z
  .record(
    z.string().regex(/^[A-Za-z][A-Za-z0-9]{0,63}$/, { error: "expected an ssh option name like ServerAliveInterval" }),
    text(1_000),
  )
  .superRefine((options, ctx) => {
    for (const key of Object.keys(options)) {
      if (RESERVED_SSH_OPTIONS.includes(key.toLowerCase())) {
        ctx.addIssue({ code: "custom", path: [key], message: `${key} is set by the lab (use the ssh field for it, or leave it)` });
      }
    }
  });
const port = z.number({ error: "expected an integer from 1 to 65535" }).int({ error: "expected an integer from 1 to 65535" }).min(1, { error: "expected an integer from 1 to 65535" }).max(65535, { error: "expected an integer from 1 to 65535" });
const absolutePath = text(500)
  .refine((value) => value.startsWith("/"), { error: "expected an absolute path" })
  .refine((value) => !value.includes("'"), { error: "must not contain a single quote" });
const pathOrHome = text(1_000).refine((value) => value.startsWith("/") || value.startsWith("~/"), { error: "expected an absolute path or one starting with ~/" });
const positiveNumber = (max: number, unit: string) =>
  z.number({ error: `expected a number of ${unit}` }).positive({ error: `expected a number of ${unit} above 0` }).max(max, { error: `at most ${max} ${unit}` });

const sshSchema = z.strictObject({
  host: sshHostName,
  user: sshUser.nullable().default(null),
  port: port.nullable().default(null),
  identityFile: pathOrHome.nullable().default(null),
  jumpHost: jumpHost.nullable().default(null),
  options: sshOptions.default({}),
  connectTimeoutSeconds: z.number({ error: "expected an integer from 1 to 300" }).int({ error: "expected an integer from 1 to 300" }).min(1, { error: "expected an integer from 1 to 300" }).max(300, { error: "expected an integer from 1 to 300" }).default(DEFAULT_CONNECT_TIMEOUT_SECONDS),
});

/** sbatch options the transport sets itself (its job name finds the agent's allocation again; the script is the keeper). */
const RESERVED_SBATCH_OPTIONS = /^(--job-name|-J|--wrap|--output|-o|--error|-e|--parsable|--gres|--gpus|-G|--nodes|-N|--jobid|--pty|--overlap|--chdir|-D)(=|$)/;
const sbatchArg = text(500)
  .refine((value) => value.startsWith("-"), { error: 'expected an option ("--partition=gpu"): the command is the lab\'s' })
  .refine((value) => !RESERVED_SBATCH_OPTIONS.test(value), { error: "is set by the lab (job name, output, GPUs, one node)" })
  .refine((value) => !value.includes("'"), { error: "must not contain a single quote" });

const gpuList = z.array(z.strictObject(hostGpuSchema.shape)).max(1024).superRefine((gpus, ctx) => {
  const seen = new Set<string>();
  gpus.forEach((gpu, index) => {
    if (seen.has(gpu.uuid)) ctx.addIssue({ code: "custom", path: [index, "uuid"], message: `duplicate GPU uuid ${gpu.uuid}` });
    seen.add(gpu.uuid);
  });
});

const commonFields = {
  id: z.string({ error: "expected a string" }).regex(HOST_ID_PATTERN, { error: "expected 1 to 31 of a-z 0-9 -, starting with a letter or digit" }),
  label: text(100).optional(),
  python: notOption(500).refine((value) => !value.includes("'"), { error: "must not contain a single quote" }).nullable().default(null),
  gpus: z.union([z.literal("auto"), z.literal("none"), gpuList], { error: 'expected "auto", "none" or a list of GPUs' }).default("auto"),
  whenFull: z.enum(["queue", "refuse"], { error: 'expected "queue" or "refuse"' }).default("queue"),
  leaseMinutes: positiveNumber(7 * 24 * 60, "minutes").default(DEFAULT_LEASE_MINUTES),
  interruptGraceSeconds: z.number({ error: "expected a number of seconds" }).min(0, { error: "expected 0 to 600 seconds" }).max(600, { error: "expected 0 to 600 seconds" }).default(DEFAULT_INTERRUPT_GRACE_SECONDS),
  runtimeDir: absolutePath.nullable().default(null),
  maxGpusPerKernel: z.number({ error: "expected an integer of at least 1" }).int({ error: "expected an integer of at least 1" }).min(1, { error: "expected an integer of at least 1" }).nullable().default(null),
};

const hostSchema = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({ ...commonFields, kind: z.literal("local") }),
    z.strictObject({ ...commonFields, kind: z.literal("ssh"), ssh: sshSchema }),
    z.strictObject({
      ...commonFields,
      kind: z.literal("slurm"),
      slurm: z.strictObject({
        sbatchArgs: z.array(sbatchArg).max(50).default([]),
        gpusPerAgent: z.number({ error: "expected an integer from 0 to 64" }).int({ error: "expected an integer from 0 to 64" }).min(0, { error: "expected an integer from 0 to 64" }).max(64, { error: "expected an integer from 0 to 64" }).default(1),
        login: sshSchema.nullable().default(null),
      }),
    }),
  ],
  { error: 'expected kind "local", "ssh" or "slurm"' },
);

const fileSchema = z
  .strictObject({
    // Each entry is checked on its own (checkHosts): one bad entry leaves only itself out.
    hosts: z.array(z.unknown(), { error: "expected a list of hosts" }).max(200).default([]),
    defaultHost: z.string({ error: "expected a host id" }).optional(),
    healthIntervalSeconds: positiveNumber(86_400, "seconds").default(60),
    idle: z
      .strictObject({
        minutes: z.number({ error: "expected a number of minutes" }).min(0, { error: "expected 0 (off) or more minutes" }).max(7 * 24 * 60).default(60),
        gpuUtilizationPercent: z.number({ error: "expected a percentage" }).min(0, { error: "expected 0 to 100" }).max(100, { error: "expected 0 to 100" }).default(5),
        warnMinutes: z.number({ error: "expected a number of minutes" }).min(0, { error: "expected 0 or more minutes" }).max(24 * 60).default(5),
      })
      .default({ minutes: 60, gpuUtilizationPercent: 5, warnMinutes: 5 }),
  })
  ;

type ParsedHost = z.infer<typeof hostSchema>;
type ParsedSsh = z.infer<typeof sshSchema>;

/** Rules across fields of one entry (the schema checks each field). */
function entryIssues(host: ParsedHost): Array<{ path: PropertyKey[]; message: string }> {
  const issues: Array<{ path: PropertyKey[]; message: string }> = [];
  if ((host.id === LOCAL_HOST_ID) !== (host.kind === "local")) {
    issues.push({ path: ["id"], message: `the id "local" is for the one host of kind "local", and only for it` });
  }
  if (Array.isArray(host.gpus) && host.maxGpusPerKernel !== null && host.maxGpusPerKernel > host.gpus.length) {
    issues.push({ path: ["maxGpusPerKernel"], message: `is more than the ${host.gpus.length} GPUs declared` });
  }
  return issues;
}

/** Each entry on its own: the good ones, and the problems of those left out. */
function checkHosts(entries: unknown[], where: string): { hosts: ParsedHost[]; problems: HostProblem[] } {
  const hosts: ParsedHost[] = [];
  const problems: HostProblem[] = [];
  const seen = new Map<string, number>();
  entries.forEach((entry, index) => {
    const at = `hosts[${index}]`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      problems.push({ id: at, errors: [`${where}: ${at}: expected a host: an object with id and kind`] });
      return;
    }
    const parsed = hostSchema.safeParse(entry);
    const errors = parsed.success
      ? entryIssues(parsed.data).map((issue) => `${where}: ${fieldPath(["hosts", index, ...issue.path])}: ${issue.message}`)
      : parsed.error.issues.map((issue) => `${where}: ${describeIssue({ ...issue, path: ["hosts", index, ...issue.path] })}`);
    const declared = "id" in entry && typeof entry.id === "string" && HOST_ID_PATTERN.test(entry.id) ? entry.id : null;
    const first = declared === null ? undefined : seen.get(declared);
    if (first !== undefined) errors.push(`${where}: ${at}.id: duplicate id "${declared}" (also hosts[${first}])`);
    else if (declared !== null) seen.set(declared, index);
    if (parsed.success && errors.length === 0) {
      hosts.push(parsed.data);
      return;
    }
    // Its own id when it has a usable one: a notebook set to run there learns why it cannot.
    const usable = declared !== null && first === undefined && declared !== LOCAL_HOST_ID;
    problems.push({ id: usable ? declared : at, errors });
  });
  return { hosts, problems };
}

/** `hosts[1].ssh.port` from zod's path. */
function fieldPath(segments: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out ? `.${String(segment)}` : String(segment);
  }
  return out || "(top level)";
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => `${fieldPath([...issue.path, key])}: unknown key (a typo?)`).join("; ");
  }
  // A bad record key (an ssh option name): the key's own message, not zod's "Invalid key in record".
  if (issue.code === "invalid_key") return `${fieldPath(issue.path)}: ${issue.issues[0]?.message ?? issue.message}`;
  if (issue.code === "invalid_union" && issue.path.at(-1) === "kind") return `${fieldPath(issue.path)}: expected "local", "ssh" or "slurm"`;
  return `${fieldPath(issue.path)}: ${issue.message}`;
}

export function expandHome(file: string, home = homedir()): string {
  return file === "~" ? home : file.startsWith("~/") ? path.join(home, file.slice(2)) : file;
}

function sshTarget(ssh: ParsedSsh): SshTarget {
  return { ...ssh, identityFile: ssh.identityFile === null ? null : expandHome(ssh.identityFile) };
}

function defaultLabel(host: ParsedHost): string {
  switch (host.kind) {
    case "local":
      return "this machine";
    case "ssh":
      return `${host.id} (ssh ${host.ssh.host})`;
    case "slurm":
      return `${host.id} (Slurm${host.slurm.login ? ` via ${host.slurm.login.host}` : ""})`;
  }
}

function toHost(host: ParsedHost): HostConfig {
  const common: Omit<HostCommon, "kind"> = {
    id: host.id,
    label: host.label ?? defaultLabel(host),
    python: host.python,
    gpus: host.gpus,
    whenFull: host.whenFull,
    leaseSeconds: Math.round(host.leaseMinutes * 60),
    interruptGraceMs: Math.round(host.interruptGraceSeconds * 1000),
    runtimeDir: host.runtimeDir,
    maxGpusPerKernel: host.maxGpusPerKernel,
  };
  switch (host.kind) {
    case "local":
      return { ...common, kind: "local" };
    case "ssh":
      return { ...common, kind: "ssh", ssh: sshTarget(host.ssh) };
    case "slurm":
      return { ...common, kind: "slurm", slurm: { ...host.slurm, login: host.slurm.login ? sshTarget(host.slurm.login) : null } };
  }
}

export function defaultLocalHost(): LocalHostConfig {
  return {
    id: LOCAL_HOST_ID,
    label: "this machine",
    kind: "local",
    python: null,
    gpus: "auto",
    whenFull: "queue",
    leaseSeconds: DEFAULT_LEASE_MINUTES * 60,
    interruptGraceMs: DEFAULT_INTERRUPT_GRACE_SECONDS * 1000,
    runtimeDir: null,
    maxGpusPerKernel: null,
  };
}

/**
 * Checks a parsed JSON document. A bad host entry is left out and listed in
 * `problems`; a problem of the file as a whole throws HostsConfigError naming
 * the file and every bad field.
 */
export function parseHostsConfig(json: unknown, file: string | null): HostsConfig {
  const where = file ?? "hosts config";
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    throw new HostsConfigError(parsed.error.issues.map((issue) => `${where}: ${describeIssue(issue)}`).join("\n"));
  }
  const checked = checkHosts(parsed.data.hosts, where);
  const hosts = checked.hosts.map(toHost);
  if (!hosts.some((host) => host.kind === "local")) hosts.unshift(defaultLocalHost());
  const ids = [...hosts.map((host) => host.id), ...checked.problems.map((problem) => problem.id)];
  const defaultHost = parsed.data.defaultHost ?? LOCAL_HOST_ID;
  // A default host left out for its own problems stays the default: its notebooks are told why it cannot start.
  if (!ids.includes(defaultHost)) throw new HostsConfigError(`${where}: defaultHost: names no host (hosts: ${ids.join(", ")})`);
  return { file, hosts, problems: checked.problems, defaultHost, healthIntervalSeconds: parsed.data.healthIntervalSeconds, idle: parsed.data.idle };
}

/** The file named by `file`, else MGPULAB_HOSTS_FILE, else `<dataDir>/hosts.json` if present, else the local host alone. */
export function loadHostsConfig(options: { file?: string | null; dataDir: string; env?: Readonly<Record<string, string | undefined>> }): HostsConfig {
  const env = options.env ?? process.env;
  const named = options.file ?? (env.MGPULAB_HOSTS_FILE || null);
  const fallback = path.join(options.dataDir, "hosts.json");
  const file = named ?? (existsSync(fallback) ? fallback : null);
  if (file === null) return parseHostsConfig({}, null);
  let source: string;
  try {
    source = readFileSync(file, "utf8");
  } catch (error) {
    const reason = errorMessage(error);
    throw new HostsConfigError(`${file}: cannot read the hosts file${named === env.MGPULAB_HOSTS_FILE && named ? " (MGPULAB_HOSTS_FILE)" : ""}: ${reason}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(source);
  } catch (error) {
    // Line and column, as an editor shows them (JSON.parse names an offset at best).
    const found = findJsonSyntaxError(source);
    const reason = found ? `line ${found.line}, column ${found.column}: ${found.message}` : errorMessage(error);
    throw new HostsConfigError(`${file}: not valid JSON: ${reason}`);
  }
  return parseHostsConfig(json, file);
}
