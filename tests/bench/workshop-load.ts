/**
 * Benchmark: a workshop on one lab server, over loopback (issue "Workshops
 * and the facilitator console"). The real server (server/main.ts, production
 * build) with its host agent; one facilitator with the console open; N
 * participants (socket.io clients, each with their own session, copy and
 * kernel) who join at once, then each work through the scenario step by step:
 * commit a prediction, run the step's cell, and run trivial cells (`1+1`)
 * between steps. Measures what a participant sees (trivial cell round trip,
 * execute → cell-finished), what the facilitator sees (a committed
 * prediction → the first `workshop:console` push that shows it), the
 * server's memory and CPU, and each idle kernel's memory before and after
 * torch, and for every step run what the participant watches while it runs:
 * the time from sending `execute` to the cell's first output (a stream line,
 * an output, live metric points) and the largest gap between updates until
 * the cell finished. Then checks that nothing was lost (every participant's notebook,
 * the database, the console's roster and tallies). Prints human lines and a
 * JSON summary; exits 1 when anything was lost or did not finish in time.
 *
 *   npm run bench:workshop -- [--participants 60] [--trivial 8] [--burst 10] [--think-ms 500]
 *     [--steps split,equivalence,replication,scaling,placement,verdicts | none] [--limit-s 540]
 *     [--json file] [--nice-kernels 19] [--profile dir] [--no-build] [--defaults]
 *
 * Builds the web app first when it is stale (scripts/lib.sh ensure_next_build)
 * unless --no-build. `--steps none` skips the experiments (no torch); the
 * scenario runs with small parameters (see LIGHT_PARAMETERS), or with the
 * scenario's own defaults with `--defaults` (4 devices: DDP steps start rank
 * processes, for a few participants only). `--nice-kernels`
 * lowers every kernel's priority (and its scheduler autogroup's) once it is
 * idle, to show what a lower kernel priority would change; `--profile`
 * samples the server's CPU and prints where it went.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, setPriority, tmpdir, totalmem } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { LabServer } from "../helpers/lab-server";
import { signIn } from "../helpers/lab-session";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { sourceHash } from "../../server/core/protocol/source-hash";
import type { Cell, NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { KernelListing } from "../../server/core/protocol/kernels-model";
import type { WorkshopConsoleView } from "../../server/core/protocol/workshop-model";

const SCENARIO = "dp-basics";
/**
 * Small enough that 60 copies finish on two cores: one device (so no step starts DDP rank processes:
 * replication and scaling launch two more torch interpreters per participant with 2 or more), a tiny
 * MLP, 2 timed repeats. Every step then runs inside the participant's own kernel.
 */
const LIGHT_PARAMETERS = { batch_size: 8, devices: 1, hidden: 8, d_in: 4, steps: 1, timing_repeats: 2, compare_ddp: false };
/** Every step of dp-basics, in order (the verdicts cell would run any experiment skipped before it). */
const ALL_STEPS = ["split", "equivalence", "replication", "scaling", "placement", "verdicts"];
const TRIVIAL_SOURCE = "1+1";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

function textOption(name: string, fallback: string | null): string | null {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
}

const PARTICIPANTS = option("participants", 60);
const TRIVIAL_PER_PARTICIPANT = option("trivial", 8);
const BURST = option("burst", 10);
const THINK_MS = option("think-ms", 500);
const LIMIT_S = option("limit-s", 540);
const STEPS = (textOption("steps", ALL_STEPS.join(",")) ?? "").split(",").filter((step) => step !== "" && step !== "none");
const JSON_OUT = textOption("json", null);
/** Niceness given to every participant's kernel once it is idle (0: as the lab starts them): what a lower kernel priority would change. */
const NICE_KERNELS = option("nice-kernels", 0);
/** A folder for the server's V8 CPU profile (node --cpu-prof); its summary is printed. */
const PROFILE_DIR = textOption("profile", null);
/** The scenario's default parameters instead of LIGHT_PARAMETERS (what a class runs without a preset). */
const DEFAULTS = process.argv.includes("--defaults");

// --- measuring ------------------------------------------------------------------------------------

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))]!;
}

interface Spread {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  min: number;
}

function spread(values: readonly number[]): Spread {
  return {
    n: values.length,
    p50: round(percentile(values, 0.5)),
    p90: round(percentile(values, 0.9)),
    p99: round(percentile(values, 0.99)),
    max: round(values.length ? Math.max(...values) : NaN),
    min: round(values.length ? Math.min(...values) : NaN),
  };
}

function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

function procStatus(pid: number, field: string): number {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Resident memory (VmRSS), MiB. */
const rssMiB = (pid: number): number => procStatus(pid, "VmRSS");

/** Proportional set size: shared pages (torch's libraries) divided among the processes that map them, MiB. */
function pssMiB(pid: number): number {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** utime + stime of a process, seconds (clock ticks of 1/100 s, Linux's USER_HZ). */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

/** The process and its descendants. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = parentOf(Number(entry));
    if (parent !== null) children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const tree: number[] = [];
  const todo = [root];
  while (todo.length > 0) {
    const pid = todo.pop()!;
    tree.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return tree;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

function memAvailableMiB(): number {
  const match = /MemAvailable:\s+(\d+) kB/.exec(readFileSync("/proc/meminfo", "utf8"));
  return match ? Number(match[1]) / 1024 : NaN;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const think = (): Promise<void> => (THINK_MS > 0 ? sleep(Math.random() * 2 * THINK_MS) : Promise.resolve());

// --- the deadline: the benchmark stops by itself ---------------------------------------------------

const startedAt = Date.now();
const deadline = startedAt + LIMIT_S * 1000;

class DeadlineError extends Error {}

/** `promise`, or a DeadlineError once the benchmark's time is up (or after `limitMs`). */
function within<T>(promise: Promise<T>, what: string, limitMs = Infinity): Promise<T> {
  const left = Math.min(limitMs, deadline - Date.now());
  if (left <= 0) return Promise.reject(new DeadlineError(`out of time before ${what}`));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(`timed out (${Math.round(left / 1000)} s): ${what}`)), left);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// --- the people --------------------------------------------------------------------------------------

interface Finished {
  status: string;
  at: number;
}

/** What a participant sees of a running cell: its output streaming in, its live metrics and chart points. */
const UPDATE_EVENTS = new Set(["cell-stream", "cell-stream-tail", "cell-output", "cell-metric-points", "cell-metrics"]);

interface PredictionRecord {
  participant: number;
  userId: string;
  questionId: string;
  choice: string;
  sentAt: number;
  ackAt: number;
}

/** A participant: their socket, their copy, and every cell-finished they were told. */
class Participant {
  notebookId = "";
  doc: NotebookDocument | null = null;
  trivialCellId = "";
  /** Executes sent and acknowledged, per cell. */
  readonly executed = new Map<string, number>();
  readonly predictions: PredictionRecord[] = [];
  readonly stepStatus: Record<string, string> = {};
  readonly stepMs: Record<string, number> = {};
  /** Per step: execute sent → the cell's first update; and the longest wait between updates until it finished. */
  readonly stepFirstOutputMs: Record<string, number> = {};
  readonly stepLargestGapMs: Record<string, number> = {};
  /** When each cell's updates arrived (performance.now()). */
  private readonly updates = new Map<string, number[]>();
  participantPushes = 0;
  private readonly finished = new Map<string, Finished[]>();
  private readonly waiters: Array<() => void> = [];

  constructor(
    readonly index: number,
    readonly client: TestClient,
    readonly userId: string,
    readonly joinedMs: number,
  ) {
    client.socket.on("notebook:events", (_notebookId, _firstSeq, events) => {
      for (const event of events) {
        if (UPDATE_EVENTS.has(event.type) && "cellId" in event) {
          const list = this.updates.get(event.cellId) ?? [];
          list.push(performance.now());
          this.updates.set(event.cellId, list);
        }
        if (event.type !== "cell-finished") continue;
        this.finished.set(event.cellId, [...(this.finished.get(event.cellId) ?? []), { status: event.status, at: performance.now() }]);
        for (const wake of this.waiters.splice(0)) wake();
      }
    });
    client.socket.on("workshop:participant", () => {
      this.participantPushes += 1;
    });
  }

  finishedCount(cellId: string): number {
    return this.finished.get(cellId)?.length ?? 0;
  }

  /** The `index`-th (0-based) cell-finished of that cell. */
  private async nthFinished(cellId: string, index: number): Promise<Finished> {
    for (;;) {
      const seen = this.finished.get(cellId)?.[index];
      if (seen) return seen;
      await new Promise<void>((wake) => this.waiters.push(wake));
    }
  }

  /** A run's updates, from `began` to its end: the first one's delay and the longest wait between two (the end counts as one). */
  streaming(cellId: string, began: number, ended: number): { firstMs: number | null; largestGapMs: number | null } {
    const seen = (this.updates.get(cellId) ?? []).filter((at) => at >= began && at <= ended);
    if (seen.length === 0) return { firstMs: null, largestGapMs: null };
    const times = [...seen, ended];
    let largest = 0;
    for (let i = 1; i < times.length; i++) largest = Math.max(largest, times[i]! - times[i - 1]!);
    return { firstMs: seen[0]! - began, largestGapMs: largest };
  }

  /** Runs one cell as the page does (execute with the hash of the text shown); the round trip to its cell-finished. */
  async run(cell: Pick<Cell, "id" | "source">, limitMs: number): Promise<{ ms: number; ackMs: number; status: string; firstOutputMs: number | null; largestGapMs: number | null }>  {
    const index = this.executed.get(cell.id) ?? 0;
    const began = performance.now();
    const ack = await within(this.client.send({ op: "execute", notebookId: this.notebookId, cellIds: [cell.id], sourceHashes: { [cell.id]: sourceHash(cell.source) } }), `P${this.index} execute`, limitMs);
    const ackMs = performance.now() - began;
    if (!ack.ok) throw new Error(`P${this.index}: execute of ${cell.id} refused: ${ack.error}`);
    this.executed.set(cell.id, index + 1);
    const finished = await within(this.nthFinished(cell.id, index), `P${this.index} cell-finished of ${cell.id}`, limitMs);
    const { firstMs, largestGapMs } = this.streaming(cell.id, began, finished.at);
    return { ms: finished.at - began, ackMs, status: finished.status, firstOutputMs: firstMs, largestGapMs };
  }

  async open(): Promise<NotebookDocument> {
    const opened = await within(this.client.send({ op: "open", notebookId: this.notebookId }), `P${this.index} open`);
    if (!opened.ok || !opened.notebook) throw new Error(`P${this.index}: open failed: ${opened.ok ? "no snapshot" : opened.error}`);
    return opened.notebook;
  }
}

/** The facilitator's console: every push, and when each participant's prediction first showed in it. */
class ConsoleRecorder {
  readonly pushes: Array<{ at: number; lagMs: number; bytes: number }> = [];
  /** `${userId}|${questionId}|${choice}` → arrival (performance.now()). */
  readonly firstSeen = new Map<string, number>();
  latest: WorkshopConsoleView | null = null;

  constructor(client: TestClient, workshopId: () => string) {
    client.socket.on("workshop:console", (id, view) => {
      if (id !== workshopId()) return;
      const at = performance.now();
      this.pushes.push({ at, lagMs: Date.now() - Date.parse(view.computedAt), bytes: Buffer.byteLength(JSON.stringify(view)) });
      this.latest = view;
      for (const row of view.roster) {
        for (const [questionId, choice] of Object.entries(row.predictions)) {
          const key = `${row.participantId}|${questionId}|${choice}`;
          if (!this.firstSeen.has(key)) this.firstSeen.set(key, at);
        }
      }
    });
  }
}

// --- the run ---------------------------------------------------------------------------------------

interface Phase {
  name: string;
  wallS: number;
  serverCpuS: number;
  agentCpuS: number;
  benchCpuS: number;
  /** `workshop:console` pushes the facilitator received in this phase: one live recompute each. */
  consolePushes: number;
}

async function main(): Promise<number> {
  const problems: string[] = [];
  const dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-bench-workshop-"));
  let server: LabServer | null = null;
  const sockets: TestClient[] = [];
  let agentPid: number | null = null;
  const kernelPids = new Set<number>();
  const serverRss: Array<{ at: number; mib: number }> = [];
  const agentRss: Array<{ at: number; mib: number }> = [];
  let sampler: NodeJS.Timeout | null = null;
  const phases: Phase[] = [];
  const figures: Record<string, unknown> & { schedulerGroups?: { autogroupEnabled: boolean; server: string; distinctKernelGroups: number } } = {
    date: new Date().toISOString(),
    machine: `${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
    participants: PARTICIPANTS,
    steps: STEPS,
    parameters: STEPS.length > 0 ? (DEFAULTS ? "the scenario's defaults" : LIGHT_PARAMETERS) : null,
    trivialPerParticipant: TRIVIAL_PER_PARTICIPANT,
    burstPerParticipant: BURST,
    thinkMs: THINK_MS,
  };
  const say = (line: string): void => console.log(`[${((Date.now() - startedAt) / 1000).toFixed(1)} s] ${line}`);

  let pushesSoFar = (): number => 0;
  let phaseMark = { at: performance.now(), server: 0, agent: 0, bench: process.cpuUsage(), pushes: 0 };
  const markPhase = (name: string): void => {
    const now = { at: performance.now(), server: server ? cpuSeconds(server.pid) : 0, agent: agentPid ? cpuSeconds(agentPid) : 0, bench: process.cpuUsage(), pushes: pushesSoFar() };
    const bench = process.cpuUsage(phaseMark.bench);
    phases.push({
      name,
      wallS: round((now.at - phaseMark.at) / 1000, 2),
      serverCpuS: round(now.server - phaseMark.server, 2),
      agentCpuS: round(now.agent - phaseMark.agent, 2),
      benchCpuS: round((bench.user + bench.system) / 1e6, 2),
      consolePushes: now.pushes - phaseMark.pushes,
    });
    phaseMark = now;
  };

  try {
    if (!process.argv.includes("--no-build")) execFileSync("bash", ["-c", "source scripts/lib.sh && ensure_next_build"], { cwd: path.resolve(__dirname, "..", ".."), stdio: "inherit" });
    say(`starting the lab server (${PARTICIPANTS} participants, steps: ${STEPS.join(", ") || "none"})`);
    server = await LabServer.start({
      ...(PROFILE_DIR ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${profilerModule(PROFILE_DIR)}`.trim() } : {}),
      MGPULAB_DATA_DIR: dataDir,
      MGPULAB_MAX_KERNELS: String(Math.max(80, PARTICIPANTS + 10)),
      MGPULAB_JOIN_RATE_LIMIT: `${Math.max(120, PARTICIPANTS * 2)}/60`,
    });
    const lab = server;
    sampler = setInterval(() => {
      const at = (Date.now() - startedAt) / 1000;
      serverRss.push({ at, mib: rssMiB(lab.pid) });
      if (agentPid !== null) agentRss.push({ at, mib: rssMiB(agentPid) });
    }, 500);
    const admin = await connectClient(lab.url);
    sockets.push(admin);
    const listKernels = async (): Promise<KernelListing> => {
      const listed = await within(admin.sendLab({ op: "list-kernels" }), "list-kernels");
      if (!listed.ok || !listed.kernels) throw new Error(`list-kernels failed: ${listed.ok ? "no list" : listed.error}`);
      for (const kernel of listed.kernels.kernels) if (kernel.pid !== null) kernelPids.add(kernel.pid);
      return listed.kernels;
    };

    const email = "facilitator@example.com";
    const password = "bench-facilitator-password";
    const made = await admin.sendLab({ op: "create-user", name: "Facilitator", email, password, role: "facilitator" });
    if (!made.ok) throw new Error(`create-user failed: ${made.error}`);
    const facilitator = await connectClient(lab.url, await signIn(lab.url, email, password));
    sockets.push(facilitator);
    let workshopId = "";
    const recorder = new ConsoleRecorder(facilitator, () => workshopId);
    pushesSoFar = () => recorder.pushes.length;
    const created = await facilitator.sendLab({ op: "create-workshop", title: "Load test", scenarioIds: [SCENARIO], capacity: PARTICIPANTS });
    if (!created.ok || !created.workshop) throw new Error(`create-workshop failed: ${created.ok ? "no workshop" : created.error}`);
    workshopId = created.workshop.id;
    const joinCode = created.workshop.joinCode;
    const consoleOpened = await facilitator.sendLab({ op: "workshop-console", workshopId });
    if (!consoleOpened.ok) throw new Error(`workshop-console failed: ${consoleOpened.error}`);
    const serverRssAtRest = rssMiB(lab.pid);
    const memAvailableBefore = memAvailableMiB();
    say(`server ready: RSS ${serverRssAtRest.toFixed(0)} MiB; workshop ${joinCode}`);
    markPhase("start");

    // --- everybody joins at once ---------------------------------------------------------------
    const joinBegan = performance.now();
    const joinHttpMs: number[] = [];
    const participants = await within(
      Promise.all(
        Array.from({ length: PARTICIPANTS }, async (_, index): Promise<Participant> => {
          const began = performance.now();
          const response = await fetch(`${lab.url}/api/auth/workshop/join`, {
            method: "POST",
            headers: { "Content-Type": "application/json", Origin: new URL(lab.url).origin },
            body: JSON.stringify({ code: joinCode, name: `Participant ${index + 1}` }),
          });
          const body = (await response.json().catch(() => ({}))) as { userId?: string };
          const cookie = response.headers.getSetCookie().find((line) => line.startsWith("mgpulab.session_token="))?.split(";")[0];
          if (!response.ok || !cookie || !body.userId) throw new Error(`participant ${index + 1}: join answered ${response.status}`);
          joinHttpMs.push(performance.now() - began);
          const client = await connectClient(lab.url, cookie);
          sockets.push(client);
          const mine = await client.sendLab({ op: "my-workshop" });
          if (!mine.ok || mine.participantWorkshop?.state !== "admitted") throw new Error(`participant ${index + 1}: not admitted (${mine.ok ? mine.participantWorkshop?.state : mine.error})`);
          return new Participant(index, client, body.userId, performance.now() - joinBegan);
        }),
      ),
      "the joins",
    );
    const joinedMs = Math.max(...participants.map((participant) => participant.joinedMs));
    say(`${participants.length} joined (HTTP join + socket + admitted) in ${(joinedMs / 1000).toFixed(2)} s`);

    // --- their kernels, started ahead of time ---------------------------------------------------
    let idleKernels: KernelListing | null = null;
    for (;;) {
      const kernels = await listKernels();
      if (kernels.kernels.filter((kernel) => kernel.state === "idle").length >= PARTICIPANTS) {
        idleKernels = kernels;
        break;
      }
      if (performance.now() - joinBegan > 180_000) throw new Error(`only ${kernels.kernels.filter((kernel) => kernel.state === "idle").length} of ${PARTICIPANTS} kernels idle after 180 s`);
      await within(sleep(250), "kernels starting");
    }
    const kernelsReadyMs = performance.now() - joinBegan;
    // A guided scenario's kernel imports torch in the background once started (the lab logs each): a class
    // arrives after its kernels started ahead, so the steps are measured once that is done, as it would find them.
    const preloaded = (): number => lab.logs.filter((line) => line.includes("preloaded torch")).length;
    while (preloaded() < PARTICIPANTS && performance.now() - joinBegan < 300_000) await within(sleep(250), "kernels importing torch");
    const kernelsPreloadedMs = performance.now() - joinBegan;
    figures.kernelsPreloaded = preloaded();
    say(`${preloaded()} of ${PARTICIPANTS} kernels had imported torch ${(kernelsPreloadedMs / 1000).toFixed(1)} s after the first join`);
    // Each kernel leads its own session (its PTY): with the scheduler's autogroups (Linux's default for
    // desktop kernels) that is its own scheduling group, whose share a process's nice value does not change.
    const groupOf = (pid: number): string => {
      try {
        return readFileSync(`/proc/${pid}/autogroup`, "utf8").trim();
      } catch {
        return "none";
      }
    };
    const kernelGroups = new Set(idleKernels.kernels.filter((kernel) => kernel.pid !== null).map((kernel) => groupOf(kernel.pid!).split(" ")[0]));
    figures.schedulerGroups = { autogroupEnabled: readFileSync("/proc/sys/kernel/sched_autogroup_enabled", "utf8").trim() === "1", server: groupOf(lab.pid), distinctKernelGroups: kernelGroups.size };
    if (NICE_KERNELS !== 0) {
      // As if the agent started kernels at a lower priority: the process and, under autogroups, its group (torch and experiments inherit both).
      for (const kernel of idleKernels.kernels) {
        if (kernel.pid === null) continue;
        for (const pid of processTree(kernel.pid)) setPriority(pid, NICE_KERNELS);
        if (figures.schedulerGroups.autogroupEnabled) writeFileSync(`/proc/${kernel.pid}/autogroup`, String(NICE_KERNELS));
      }
      say(`kernels reniced to ${NICE_KERNELS} (their autogroups too: ${groupOf(idleKernels.kernels[0]!.pid!)})`);
    }
    say(`scheduler: ${JSON.stringify(figures.schedulerGroups)}`);
    const hosts = await admin.sendLab({ op: "list-hosts" });
    agentPid = hosts.ok ? (hosts.hosts?.find((host) => host.agent !== null)?.agent?.pid ?? null) : null;
    const idleMemory = kernelMemory(idleKernels);
    const serverRssJoined = rssMiB(lab.pid);
    // The server's own children: the warm scenario catalog process (Python with torch).
    const serverChildrenJoined = processTree(lab.pid).slice(1).reduce((sum, pid) => sum + (rssMiB(pid) || 0), 0);
    const agentRssJoined = agentPid !== null ? rssMiB(agentPid) : NaN;
    const memAvailableIdle = memAvailableMiB();
    say(`${PARTICIPANTS} kernels idle ${(kernelsReadyMs / 1000).toFixed(2)} s after the first join; each ${idleMemory.rss.p50} MiB RSS (PSS ${idleMemory.pss.p50}); server RSS ${serverRssJoined.toFixed(0)} MiB, agent ${agentRssJoined.toFixed(0)} MiB`);
    markPhase("join");

    // --- each opens their copy: light parameters, one scratch cell for trivial runs ----------------
    await within(
      Promise.all(
        participants.map(async (participant) => {
          const listed = await participant.client.sendLab({ op: "list-notebooks" });
          const copy = listed.ok ? listed.notebooks?.find((notebook) => notebook.title.length > 0) : undefined;
          if (!copy) throw new Error(`P${participant.index}: no copy in list-notebooks`);
          participant.notebookId = copy.id;
          let doc = await participant.open();
          if (STEPS.length > 0 && !DEFAULTS) {
            const templated = doc.cells.find((cell) => cell.kind === "code" && cell.template !== null);
            if (!templated) throw new Error(`P${participant.index}: no templated cell`);
            const set = await participant.client.send({ op: "set-parameters", notebookId: participant.notebookId, cellId: templated.id, values: LIGHT_PARAMETERS });
            if (!set.ok) throw new Error(`P${participant.index}: set-parameters refused: ${set.error}`);
          }
          participant.trivialCellId = `bench-${participant.index}-${randomUUID().slice(0, 8)}`;
          const inserted = await participant.client.send({ op: "insert-cell", notebookId: participant.notebookId, index: doc.cells.length, cell: { id: participant.trivialCellId, kind: "code", source: TRIVIAL_SOURCE } });
          if (!inserted.ok) throw new Error(`P${participant.index}: insert-cell refused: ${inserted.error}`);
          doc = await participant.open();
          participant.doc = doc;
        }),
      ),
      "opening the copies",
    );
    say("every copy open, parameters set, scratch cell added");
    markPhase("open");

    const trivial = (participant: Participant): Pick<Cell, "id" | "source"> => ({ id: participant.trivialCellId, source: TRIVIAL_SOURCE });
    const trivialFailures: string[] = [];
    const runTrivial = async (participant: Participant, into: number[]): Promise<void> => {
      const result = await participant.run(trivial(participant), 60_000);
      into.push(result.ms);
      if (result.status !== "ok") trivialFailures.push(`P${participant.index}: ${result.status}`);
    };

    // --- one participant alone (the others connected, idle): a trivial cell's floor on this server -----
    const solo: number[] = [];
    for (let i = 0; i < 20; i++) await within(runTrivial(participants[0]!, solo), "the solo trivial cells");
    say(`one participant alone: trivial p50 ${percentile(solo, 0.5).toFixed(1)} ms`);
    // --- the console view computed on demand with nothing else happening ---------------------------------
    const timeConsole = async (rounds: number): Promise<number[]> => {
      const times: number[] = [];
      await sleep(500);
      for (let i = 0; i < rounds; i++) {
        const began = performance.now();
        const polled = await within(facilitator.sendLab({ op: "workshop-console", workshopId }), "workshop-console");
        if (polled.ok) times.push(performance.now() - began);
      }
      return times;
    };
    const consoleQuietBefore = await timeConsole(10);
    say(`console view on demand, quiet: p50 ${percentile(consoleQuietBefore, 0.5).toFixed(1)} ms`);
    markPhase("solo");

    // --- all at once: trivial cells, nothing else running -----------------------------------------
    const burstBefore: number[] = [];
    if (BURST > 0) {
      await within(Promise.all(participants.map(async (participant) => {
        for (let i = 0; i < BURST; i++) await runTrivial(participant, burstBefore);
      })), "the first burst");
      say(`burst before: ${burstBefore.length} trivial cells, p50 ${percentile(burstBefore, 0.5).toFixed(1)} ms, p99 ${percentile(burstBefore, 0.99).toFixed(1)} ms`);
    }
    markPhase("burst before");

    // --- the scenario, step by step, trivial cells between steps -----------------------------------
    const interleaved: number[] = [];
    const interleavedAck: number[] = [];
    /** Every run of the scenario phase, for the timeline in the JSON: who, what, when (s after its start), how long. */
    const timeline: Array<{ p: number; cell: string; startS: number; ackMs: number; ms: number; status: string }> = [];
    const consolePolls: number[] = [];
    let scenarioRunning = true;
    const poller = (async () => {
      while (scenarioRunning) {
        await sleep(2_000);
        if (!scenarioRunning) break;
        const began = performance.now();
        const polled = await facilitator.sendLab({ op: "workshop-console", workshopId }).catch(() => null);
        if (polled?.ok) consolePolls.push(performance.now() - began);
      }
    })();
    const scenarioBegan = performance.now();
    const participantDone: number[] = [];
    const scenario = Promise.all(
      participants.map(async (participant) => {
        const doc = participant.doc!;
        const stepCells = STEPS.map((step) => {
          const cell = doc.cells.find((candidate) => candidate.template?.id === `${SCENARIO}/${step}`);
          if (!cell) throw new Error(`P${participant.index}: no cell for step ${step}`);
          return { step, cell };
        });
        const rounds = Math.max(1, stepCells.length);
        let trivialLeft = TRIVIAL_PER_PARTICIPANT;
        for (let i = 0; i < rounds; i++) {
          const step = stepCells[i];
          const question = step?.cell.template?.question ?? null;
          if (step && question) {
            await think();
            const choice = question.choices[participant.index % question.choices.length]!;
            const sentAt = performance.now();
            const ack = await within(participant.client.send({ op: "commit-prediction", notebookId: participant.notebookId, questionId: question.id, choice }), `P${participant.index} commit-prediction`);
            if (!ack.ok) throw new Error(`P${participant.index}: commit-prediction refused: ${ack.error}`);
            participant.predictions.push({ participant: participant.index, userId: participant.userId, questionId: question.id, choice, sentAt, ackAt: performance.now() });
          }
          const here = Math.ceil(trivialLeft / (rounds - i));
          for (let k = 0; k < here; k++) {
            await think();
            const startS = (performance.now() - scenarioBegan) / 1000;
            const result = await participant.run(trivial(participant), 60_000);
            interleaved.push(result.ms);
            interleavedAck.push(result.ackMs);
            timeline.push({ p: participant.index, cell: `trivial ${i}`, startS: round(startS, 2), ackMs: round(result.ackMs), ms: round(result.ms), status: result.status });
            if (result.status !== "ok") trivialFailures.push(`P${participant.index}: ${result.status}`);
          }
          trivialLeft -= here;
          if (step) {
            await think();
            const startS = (performance.now() - scenarioBegan) / 1000;
            const result = await participant.run(step.cell, 300_000);
            timeline.push({ p: participant.index, cell: step.step, startS: round(startS, 2), ackMs: round(result.ackMs), ms: round(result.ms), status: result.status });
            participant.stepStatus[step.step] = result.status;
            participant.stepMs[step.step] = result.ms;
            if (result.firstOutputMs !== null) participant.stepFirstOutputMs[step.step] = result.firstOutputMs;
            if (result.largestGapMs !== null) participant.stepLargestGapMs[step.step] = result.largestGapMs;
          }
        }
        participantDone.push(performance.now() - scenarioBegan);
      }),
    );
    let scenarioError: unknown = null;
    // The last minute is kept for the checks, so that a slow run still says what it lost.
    await within(scenario, "the scenario", deadline - Date.now() - 60_000).catch((error: unknown) => {
      scenarioError = error;
    });
    scenarioRunning = false;
    await poller;
    const scenarioMs = performance.now() - scenarioBegan;
    if (scenarioError !== null) problems.push(`the scenario did not complete: ${scenarioError instanceof Error ? scenarioError.message : String(scenarioError)}`);
    say(`scenario: ${participantDone.length}/${PARTICIPANTS} participants done in ${(scenarioMs / 1000).toFixed(1)} s; trivial p50 ${percentile(interleaved, 0.5).toFixed(1)} ms, p99 ${percentile(interleaved, 0.99).toFixed(1)} ms`);
    markPhase("scenario");

    const burstAfter: number[] = [];
    if (BURST > 0 && scenarioError === null) {
      await within(Promise.all(participants.map(async (participant) => {
        for (let i = 0; i < BURST; i++) await runTrivial(participant, burstAfter);
      })), "the last burst");
      say(`burst after: p50 ${percentile(burstAfter, 0.5).toFixed(1)} ms, p99 ${percentile(burstAfter, 0.99).toFixed(1)} ms`);
    }
    markPhase("burst after");

    // --- settle: the console's last push, memory with torch ----------------------------------------
    await sleep(1_500);
    const consoleQuietAfter = await timeConsole(10);
    say(`console view on demand, quiet, after the scenario (verdicts in the view): p50 ${percentile(consoleQuietAfter, 0.5).toFixed(1)} ms`);
    const afterKernels = await listKernels();
    const afterMemory = kernelMemory(afterKernels);
    const kernelCpuS = afterKernels.kernels.reduce((sum, kernel) => sum + (kernel.pid === null ? 0 : processTree(kernel.pid).reduce((s, pid) => s + (cpuSeconds(pid) || 0), 0)), 0);
    const memAvailableAfter = memAvailableMiB();
    const serverRssEnd = rssMiB(lab.pid);

    // --- nothing lost ---------------------------------------------------------------------------
    const lost: string[] = [];
    // Each participant's notebook, from a fresh snapshot.
    for (const participant of participants) {
      const doc = await participant.open();
      const scratch = doc.cells.find((cell) => cell.id === participant.trivialCellId);
      const trivialRuns = participant.executed.get(participant.trivialCellId) ?? 0;
      if (!scratch) lost.push(`P${participant.index}: the scratch cell is gone`);
      else if (trivialRuns > 0) {
        const result = scratch.outputs.find((output) => output.kind === "result");
        if (scratch.lastRun?.status !== "ok" || !result || result.kind !== "result" || result.data["text/plain"] !== "2") lost.push(`P${participant.index}: the scratch cell's last run shows ${JSON.stringify(scratch.outputs).slice(0, 120)} (${scratch.lastRun?.status})`);
      }
      if (participant.finishedCount(participant.trivialCellId) !== trivialRuns) lost.push(`P${participant.index}: ${trivialRuns} trivial executes, ${participant.finishedCount(participant.trivialCellId)} cell-finished`);
      for (const step of STEPS) {
        if (!(step in participant.stepStatus)) continue;
        const cell = doc.cells.find((candidate) => candidate.template?.id === `${SCENARIO}/${step}`);
        if (!cell || cell.executionCount === null || cell.lastRun === null || cell.outputs.length === 0) lost.push(`P${participant.index}: step ${step} ran (${participant.stepStatus[step]}) but the snapshot shows ${cell ? `executionCount ${cell.executionCount}, ${cell.outputs.length} outputs` : "no cell"}`);
      }
      for (const prediction of participant.predictions) {
        if (doc.predictions[prediction.questionId]?.choice !== prediction.choice) lost.push(`P${participant.index}: prediction ${prediction.questionId} missing from the snapshot`);
      }
    }
    // The database: every execute acknowledged is an execution, finished.
    const db = new Database(path.join(dataDir, "lab.db"), { readonly: true, fileMustExist: true });
    try {
      const rows = db
        .prepare(`SELECT r.notebookId AS notebookId, e.cellId AS cellId, e.status AS status, COUNT(*) AS n FROM CellExecution e JOIN KernelRun r ON r.id = e.runId GROUP BY r.notebookId, e.cellId, e.status`)
        .all() as Array<{ notebookId: string; cellId: string; status: string; n: number }>;
      // What one live recompute reads (workshop-facts.ts): every cell of every copy with its template guide, and the verdict cells' outputs.
      const read = db
        .prepare(
          `SELECT COUNT(*) AS cells, COALESCE(SUM(LENGTH(c.templateGuide)), 0) AS guideBytes,
                  COALESCE(SUM(CASE WHEN c.templateId LIKE '%/verdicts' AND c.executionCount IS NOT NULL THEN LENGTH(c.outputs) ELSE 0 END), 0) AS verdictBytes
             FROM Cell c JOIN Notebook n ON n.id = c.notebookId WHERE n.workshopId IS NOT NULL`,
        )
        .get() as { cells: number; guideBytes: number; verdictBytes: number };
      figures.recomputeReads = { cells: read.cells, templateGuideMiB: round(read.guideBytes / 2 ** 20, 2), verdictOutputsMiB: round(read.verdictBytes / 2 ** 20, 2) };
      const resultRows = db.prepare(`SELECT notebookId, cellId, COUNT(*) AS n FROM CellOutput WHERE kind = 'result' GROUP BY notebookId, cellId`).all() as Array<{ notebookId: string; cellId: string; n: number }>;
      for (const participant of participants) {
        for (const [cellId, sent] of participant.executed) {
          const stored = rows.filter((row) => row.notebookId === participant.notebookId && row.cellId === cellId);
          const total = stored.reduce((sum, row) => sum + row.n, 0);
          const unfinished = stored.filter((row) => row.status === "queued" || row.status === "running").reduce((sum, row) => sum + row.n, 0);
          if (total !== sent || unfinished > 0) lost.push(`P${participant.index}: cell ${cellId}: ${sent} executes sent, ${total} stored (${stored.map((row) => `${row.n} ${row.status}`).join(", ")})`);
        }
        const results = resultRows.find((row) => row.notebookId === participant.notebookId && row.cellId === participant.trivialCellId)?.n ?? 0;
        const trivialRuns = participant.executed.get(participant.trivialCellId) ?? 0;
        if (results !== trivialRuns) lost.push(`P${participant.index}: ${trivialRuns} trivial runs, ${results} results stored`);
      }
    } finally {
      db.close();
    }
    // The console: a row each, every prediction in its row and in the tallies, and in a live push.
    const finalView = await within(facilitator.sendLab({ op: "workshop-console", workshopId }), "the final console view");
    const view = finalView.ok ? finalView.console : undefined;
    const allPredictions = participants.flatMap((participant) => participant.predictions);
    if (!view) lost.push("the final console view failed");
    else {
      if (view.roster.length !== PARTICIPANTS) lost.push(`the console roster has ${view.roster.length} rows, not ${PARTICIPANTS}`);
      for (const participant of participants) {
        const row = view.roster.find((candidate) => candidate.participantId === participant.userId);
        if (!row) continue;
        for (const prediction of participant.predictions) if (row.predictions[prediction.questionId] !== prediction.choice) lost.push(`console: P${participant.index}'s prediction ${prediction.questionId} is not in their row`);
        const ranSteps = STEPS.filter((step) => step in participant.stepStatus);
        if (ranSteps.length > 0 && row.step === null) lost.push(`console: P${participant.index} ran ${ranSteps.length} steps, the roster shows none`);
        if (participant.stepStatus.verdicts === "ok" && row.lastVerdict === null) lost.push(`console: P${participant.index} ran the verdicts, the roster shows no verdict`);
      }
      for (const tally of view.tallies) {
        const expected = allPredictions.filter((prediction) => prediction.questionId === tally.questionId);
        const counted = tally.predicted.reduce((sum, n) => sum + n, 0);
        if (counted !== expected.length) lost.push(`console tally ${tally.questionId}: ${counted} predictions counted, ${expected.length} committed`);
        for (const [i, choice] of tally.choices.entries()) {
          const want = expected.filter((prediction) => prediction.choice === choice).length;
          if (tally.predicted[i] !== want) lost.push(`console tally ${tally.questionId} "${choice}": ${tally.predicted[i]}, expected ${want}`);
        }
      }
      for (const questionId of new Set(allPredictions.map((prediction) => prediction.questionId))) {
        if (!view.tallies.some((tally) => tally.questionId === questionId)) lost.push(`console: no tally for ${questionId}`);
      }
    }
    const consoleLatency: number[] = [];
    const consoleLatencyFromSend: number[] = [];
    for (const prediction of allPredictions) {
      const seen = recorder.firstSeen.get(`${prediction.userId}|${prediction.questionId}|${prediction.choice}`);
      if (seen === undefined) lost.push(`console: P${prediction.participant}'s prediction ${prediction.questionId} never appeared in a live push`);
      else {
        consoleLatency.push(seen - prediction.ackAt);
        consoleLatencyFromSend.push(seen - prediction.sentAt);
      }
    }
    if (trivialFailures.length > 0) lost.push(...trivialFailures.map((failure) => `trivial cell not ok: ${failure}`));
    for (const participant of participants) for (const [step, status] of Object.entries(participant.stepStatus)) if (status !== "ok") problems.push(`P${participant.index}: step ${step} ended ${status}`);
    problems.push(...lost);
    say(lost.length === 0 ? "nothing lost: notebooks, database, console roster and tallies all complete" : `LOST: ${lost.length} item(s)`);
    markPhase("checks");

    // --- report ------------------------------------------------------------------------------------
    const pushIntervals = recorder.pushes.slice(1).map((push, i) => push.at - recorder.pushes[i]!.at);
    const stepMs = Object.fromEntries(STEPS.map((step) => [step, spread(participants.map((participant) => participant.stepMs[step]).filter((ms): ms is number => ms !== undefined))]));
    const perStep = (of: (participant: Participant) => Record<string, number>) =>
      Object.fromEntries(STEPS.map((step) => [step, spread(participants.map((participant) => of(participant)[step]).filter((ms): ms is number => ms !== undefined))]));
    const everyStep = (of: (participant: Participant) => Record<string, number>) => spread(participants.flatMap((participant) => Object.values(of(participant))));
    const stepsWithoutOutput = participants.reduce((sum, participant) => sum + Object.keys(participant.stepMs).filter((step) => participant.stepFirstOutputMs[step] === undefined).length, 0);
    Object.assign(figures, {
      joinAllMs: round(joinedMs),
      joinHttpMs: spread(joinHttpMs),
      kernelsIdleAfterMs: round(kernelsReadyMs),
      kernelsPreloadedAfterMs: round(kernelsPreloadedMs),
      trivialSoloMs: spread(solo),
      trivialBurstBeforeMs: spread(burstBefore),
      trivialDuringScenarioMs: spread(interleaved),
      trivialDuringScenarioExecuteAckMs: spread(interleavedAck),
      trivialBurstAfterMs: spread(burstAfter),
      goalP99Under250Ms: percentile(interleaved, 0.99) < 250,
      scenarioWallS: round(scenarioMs / 1000, 1),
      participantDoneS: spread(participantDone.map((ms) => ms / 1000)),
      stepMs,
      stepFirstOutputMs: perStep((participant) => participant.stepFirstOutputMs),
      stepLargestGapMs: perStep((participant) => participant.stepLargestGapMs),
      firstOutputMs: everyStep((participant) => participant.stepFirstOutputMs),
      largestGapMs: everyStep((participant) => participant.stepLargestGapMs),
      stepsWithoutOutput,
      consoleLatencyAfterAckMs: spread(consoleLatency),
      consoleLatencyAfterSendMs: spread(consoleLatencyFromSend),
      consolePushes: recorder.pushes.length,
      consolePushIntervalMs: spread(pushIntervals),
      consolePushLagAfterComputedAtMs: spread(recorder.pushes.map((push) => push.lagMs)),
      consoleViewBytes: spread(recorder.pushes.map((push) => push.bytes)),
      consoleOnDemandMs: spread(consolePolls),
      consoleOnDemandQuietBeforeMs: spread(consoleQuietBefore),
      consoleOnDemandQuietAfterMs: spread(consoleQuietAfter),
      niceKernels: NICE_KERNELS,
      participantPushesEach: spread(participants.map((participant) => participant.participantPushes)),
      serverRssMiB: { atRest: round(serverRssAtRest), joined: round(serverRssJoined), peak: round(Math.max(...serverRss.map((sample) => sample.mib))), end: round(serverRssEnd) },
      agentRssMiB: { joined: round(agentRssJoined), peak: round(agentRss.length ? Math.max(...agentRss.map((sample) => sample.mib)) : NaN) },
      serverChildrenRssMiB: round(serverChildrenJoined),
      idleKernelMiB: idleMemory,
      kernelAfterScenarioMiB: afterMemory,
      memAvailableMiB: { before: round(memAvailableBefore), kernelsIdle: round(memAvailableIdle), after: round(memAvailableAfter) },
      kernelCpuS: round(kernelCpuS, 1),
      loadAverage: loadavg().map((value) => round(value, 2)),
      phases,
      problems,
      timeline,
    });
  } catch (error) {
    problems.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
    figures.problems = problems;
    figures.phases = phases;
  } finally {
    if (sampler) clearInterval(sampler);
    await cleanUp(server, sockets, kernelPids, () => agentPid, dataDir, problems);
  }

  if (PROFILE_DIR && existsSync(PROFILE_DIR)) {
    const profiles = readdirSync(PROFILE_DIR).filter((name) => name.endsWith(".cpuprofile")).map((name) => path.join(PROFILE_DIR, name));
    const newest = profiles.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
    if (newest) figures.serverProfile = { file: newest, ...summarizeProfile(newest) };
  }
  figures.totalWallS = round((Date.now() - startedAt) / 1000, 1);
  console.log(JSON.stringify({ ...figures, timeline: undefined }, null, 2));
  if (JSON_OUT) writeFileSync(JSON_OUT, `${JSON.stringify(figures, null, 2)}\n`);
  printHuman(figures);
  if (problems.length > 0) {
    console.log(`\n${problems.length} problem(s):\n${problems.slice(0, 40).map((problem) => `  - ${problem}`).join("\n")}`);
    return 1;
  }
  return 0;
}

/** Each kernel's process tree: RSS as `list-kernels` reports it, and PSS read here (same machine). */
function kernelMemory(kernels: KernelListing): { count: number; rss: Spread; pss: Spread; totalRssMiB: number; totalPssMiB: number } {
  const rss: number[] = [];
  const pss: number[] = [];
  for (const kernel of kernels.kernels) {
    if (kernel.memory) rss.push(kernel.memory.rssBytes / 2 ** 20);
    if (kernel.pid !== null) pss.push(processTree(kernel.pid).reduce((sum, pid) => sum + (pssMiB(pid) || 0), 0));
  }
  return { count: kernels.kernels.length, rss: spread(rss), pss: spread(pss), totalRssMiB: round(rss.reduce((a, b) => a + b, 0)), totalPssMiB: round(pss.reduce((a, b) => a + b, 0)) };
}

/** Kernels shut down, the server stopped (SIGKILL if it hangs), nothing of ours left running, the temp data removed. */
async function cleanUp(server: LabServer | null, sockets: TestClient[], kernelPids: Set<number>, agentPid: () => number | null, dataDir: string, problems: string[]): Promise<void> {
  if (server) {
    const admin = sockets[0];
    if (admin?.socket.connected) {
      await Promise.race([admin.sendLab({ op: "shutdown-all-kernels" }), sleep(30_000)]).catch(() => undefined);
    }
  }
  for (const socket of sockets) socket.close();
  if (server) {
    const lab = server;
    const stopped = await Promise.race([lab.stop("SIGTERM").then(() => true), sleep(20_000).then(() => false)]);
    if (!stopped) {
      problems.push("the server did not stop within 20 s of SIGTERM: killed");
      await lab.stop("SIGKILL");
    }
  }
  // Kernels end with shutdown-all-kernels; the agent after its lease (15 s in LabServer). Anything of ours still up then is killed by pid.
  const ours = [...kernelPids];
  const waitUntil = Date.now() + 25_000;
  while (Date.now() < waitUntil && (ours.some(alive) || (agentPid() !== null && alive(agentPid()!)))) await sleep(250);
  for (const pid of [...ours, ...(agentPid() !== null ? [agentPid()!] : [])]) {
    if (!alive(pid)) continue;
    try {
      process.kill(pid, "SIGKILL");
      problems.push(`process ${pid} was still running after the server stopped: killed`);
    } catch {
      // gone meanwhile
    }
  }
  if (existsSync(dataDir)) rmSync(dataDir, { recursive: true, force: true });
}

/**
 * A module the server imports first (NODE_OPTIONS --import; --cpu-prof is not allowed there) that
 * samples its CPU through the inspector and writes a .cpuprofile into `dir` when it exits.
 */
function profilerModule(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "cpu-profiler.mjs");
  writeFileSync(
    file,
    [
      `import { Session } from "node:inspector";`,
      `import { writeFileSync } from "node:fs";`,
      `const session = new Session();`,
      `session.connect();`,
      `session.post("Profiler.enable");`,
      `session.post("Profiler.setSamplingInterval", { interval: 1000 });`,
      `session.post("Profiler.start");`,
      `process.on("exit", () => session.post("Profiler.stop", (error, result) => {`,
      `  if (!error) writeFileSync(${JSON.stringify(path.resolve(dir))} + "/server-" + process.pid + ".cpuprofile", JSON.stringify(result.profile));`,
      `}));`,
    ].join("\n"),
  );
  return pathToFileURL(file).href;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Where the server's CPU went (a V8 .cpuprofile): self time by area, and inclusive time of the server's own functions. */
function summarizeProfile(file: string): { busyS: number; selfByArea: Array<[string, number]>; inclusiveServer: Array<[string, number]> } {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const area = (node: ProfileNode): string => {
    const { url, functionName } = node.callFrame;
    if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
    if (url.startsWith("node:")) return "node internals";
    const server = /\/server\/([^/]+)\//.exec(url);
    if (server && !url.includes("node_modules")) return `server/${server[1]}`;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    return pkg ? pkg[1]! : url.replace(/^.*\/work\/[^/]+\//, "");
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((sample, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(sample);
    if (!node) return;
    const key = area(node);
    self.set(key, (self.get(key) ?? 0) + ms);
    if (key !== "(idle)") busy += ms;
    const seen = new Set<string>();
    for (let at: number | undefined = node.id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (!/\/server\//.test(frame.url) || frame.url.includes("node_modules")) continue;
      const name = `${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*\/server\//, "server/")}:${frame.lineNumber + 1}`;
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + ms);
    }
  });
  const top = (map: Map<string, number>, count: number): Array<[string, number]> =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, ms]) => [name, round(ms / 1000, 2)]);
  return { busyS: round(busy / 1000, 1), selfByArea: top(self, 20), inclusiveServer: top(inclusive, 30) };
}

type KernelMemory = ReturnType<typeof kernelMemory>;

/** The figures the human lines use (main fills them in; absent when the run failed early). */
interface Report {
  participants: number;
  machine: string;
  steps: string[];
  parameters: object | null;
  joinAllMs: number;
  kernelsIdleAfterMs: number;
  kernelsPreloadedAfterMs: number;
  trivialSoloMs: Spread;
  trivialBurstBeforeMs: Spread;
  trivialDuringScenarioMs?: Spread;
  trivialBurstAfterMs: Spread;
  goalP99Under250Ms: boolean;
  stepFirstOutputMs: Record<string, Spread>;
  stepLargestGapMs: Record<string, Spread>;
  firstOutputMs: Spread;
  largestGapMs: Spread;
  stepsWithoutOutput: number;
  consoleLatencyAfterAckMs: Spread;
  consolePushIntervalMs: Spread;
  consolePushLagAfterComputedAtMs: Spread;
  consoleOnDemandMs: Spread;
  consoleOnDemandQuietBeforeMs: Spread;
  consoleOnDemandQuietAfterMs: Spread;
  consoleViewBytes: Spread;
  serverRssMiB: object;
  agentRssMiB: object;
  serverChildrenRssMiB: number;
  idleKernelMiB: KernelMemory;
  kernelAfterScenarioMiB: KernelMemory;
  memAvailableMiB: object;
  scenarioWallS: number;
  phases: Phase[];
  kernelCpuS: number;
  recomputeReads: object;
  totalWallS: number;
  serverProfile?: { file: string } & ReturnType<typeof summarizeProfile>;
}

function printHuman(figures: Record<string, unknown>): void {
  const f = figures as unknown as Report;
  if (f.trivialDuringScenarioMs === undefined) return;
  const line = (label: string, s: Spread | undefined, unit = "ms"): string => (s && s.n > 0 ? `${label}: p50 ${s.p50} ${unit}, p99 ${s.p99} ${unit}, max ${s.max} ${unit} (n=${s.n})` : `${label}: none`);
  console.log(
    [
      "",
      `Workshop load, ${f.participants} participants, ${f.machine}`,
      `steps run: ${f.steps.join(", ") || "none"} with ${JSON.stringify(f.parameters)}`,
      `all joined (HTTP join, socket, admitted) in ${f.joinAllMs} ms; ${f.participants} kernels idle after ${f.kernelsIdleAfterMs} ms, torch imported in all after ${f.kernelsPreloadedAfterMs} ms`,
      line("trivial cell, one participant alone", f.trivialSoloMs),
      line("trivial cell, all at once before the scenario", f.trivialBurstBeforeMs),
      line("trivial cell, between steps while all run the scenario", f.trivialDuringScenarioMs),
      line("trivial cell, all at once after the scenario", f.trivialBurstAfterMs),
      `p99 < 250 ms during the scenario: ${f.goalP99Under250Ms ? "met" : "NOT met"}`,
      line("a step's first output after execute, every step", f.firstOutputMs),
      line("a step's largest gap between updates, every step", f.largestGapMs),
      ...Object.entries(f.stepFirstOutputMs).map(([step, s]) => `  ${step}: ${line("first output", s)}; ${line("largest gap", f.stepLargestGapMs[step])}`),
      `step runs without any output: ${f.stepsWithoutOutput}`,
      line("console: prediction acknowledged → first push showing it", f.consoleLatencyAfterAckMs),
      line("console: push interval", f.consolePushIntervalMs),
      line("console: view computed → received", f.consolePushLagAfterComputedAtMs),
      line("console: on-demand view (workshop-console round trip) during the scenario", f.consoleOnDemandMs),
      line("console: on-demand view, quiet, before the scenario", f.consoleOnDemandQuietBeforeMs),
      line("console: on-demand view, quiet, after the scenario", f.consoleOnDemandQuietAfterMs),
      line("console: view size", f.consoleViewBytes, "B"),
      `server RSS: ${JSON.stringify(f.serverRssMiB)} MiB; its children (scenario catalog) ${f.serverChildrenRssMiB} MiB; agent ${JSON.stringify(f.agentRssMiB)} MiB`,
      `idle kernel: RSS p50 ${f.idleKernelMiB.rss.p50} MiB, PSS p50 ${f.idleKernelMiB.pss.p50} MiB (total PSS ${f.idleKernelMiB.totalPssMiB} MiB)`,
      `kernel after the scenario: RSS p50 ${f.kernelAfterScenarioMiB.rss.p50} MiB, PSS p50 ${f.kernelAfterScenarioMiB.pss.p50} MiB (total PSS ${f.kernelAfterScenarioMiB.totalPssMiB} MiB)`,
      `MemAvailable: ${JSON.stringify(f.memAvailableMiB)} MiB`,
      `one live console recompute reads ${JSON.stringify(f.recomputeReads)}`,
      `scenario wall ${f.scenarioWallS} s; CPU per phase: ${f.phases.map((phase) => `${phase.name} ${phase.wallS} s wall, server ${phase.serverCpuS} s, agent ${phase.agentCpuS} s, bench ${phase.benchCpuS} s, ${phase.consolePushes} console pushes`).join("; ")}; kernels ${f.kernelCpuS} s in all`,
      `total ${f.totalWallS} s`,
    ].join("\n"),
  );
  if (f.serverProfile) {
    console.log(`\nserver CPU profile (${f.serverProfile.file}): ${f.serverProfile.busyS} s busy`);
    console.log(`self time by area: ${f.serverProfile.selfByArea.map(([name, s]) => `${name} ${s} s`).join(", ")}`);
    console.log(`inclusive, the server's functions:\n${f.serverProfile.inclusiveServer.map(([name, s]) => `  ${s} s  ${name}`).join("\n")}`);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
