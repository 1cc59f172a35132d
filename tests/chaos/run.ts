/**
 * `npm run chaos`: the several-servers lab (two lab servers behind nginx,
 * PostgreSQL, Redis, the local host agent) serves a simulated workshop of
 * 20 participants while a seeded schedule kills and restarts its parts;
 * then the checker compares what every participant did and saw with the
 * database and fresh pages (check.ts). Prints what it did (each fault with
 * its time) and what it found; exits 1 on any violation.
 *
 *   npm run chaos -- [--minutes 10] [--seed N] [--participants 20] [--steps split,equivalence,replication]
 *     [--json file] [--no-build] [--plant-violation]
 *
 * The same seed replays the same schedule and the same participants'
 * choices (the lab's own timing still differs from run to run).
 * `--plant-violation` is the checker's self-test: after the real check it
 * deletes one stored output line a page showed and checks again, which
 * must find exactly that (the lab is not touched before the real check).
 */
import { execFileSync } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { io } from "socket.io-client";
import { SocketLabTransport } from "../../components/shell/model/lab-client";
import { WorkshopConsoleController } from "../../components/workshops/model/workshop-console";
import type { WorkshopConsoleView } from "../../server/core/protocol/workshop-model";
import { descendants, isAlive, pollUntilAsync, processesWithEnv, signal } from "../helpers/daemons";
import { signIn } from "../helpers/lab-session";
import { connectClient } from "../helpers/socket-harness";
import { check, documentDifferences, type CheckInput, type CheckResult, type ConsoleAtEnd, type FaultRecord, type PageAtEnd } from "./check";
import { ChaosCluster } from "./cluster";
import { fireFault } from "./faults";
import { deleteStoredLine, readLabRecords, type LabRecords } from "./lab-records";
import { Participant, SCENARIO, streamText } from "./participant";
import { derivedSeed, describePlanned, FAULT_KINDS, makeSchedule, seededRandom } from "./schedule";

const ROOT = path.resolve(__dirname, "..", "..");
/** How long the lab gets to finish every run after the class stops, and pages to show what is stored. */
const SETTLE_LIMIT_MS = 300_000;
const CONVERGE_LIMIT_MS = 120_000;
/** The agent outlives its last link by its lease (20 s in cluster.ts), then ends every kernel tree. */
const PROCESSES_GONE_LIMIT_MS = 90_000;
const MARKER = "MGPULAB_CHAOS_RUN";
/** "End now" for the whole class (its kernels shut down one by one on each server). */
const END_LIMIT_MS = 180_000;

interface Options {
  minutes: number;
  seed: number;
  participants: number;
  steps: string[];
  json: string | null;
  build: boolean;
  plant: boolean;
  /** Where the servers' and the agent's logs go (default: a temp folder, kept only when something was found). */
  logs: string | null;
}

function readOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      minutes: { type: "string" },
      seed: { type: "string" },
      participants: { type: "string" },
      steps: { type: "string" },
      json: { type: "string" },
      "no-build": { type: "boolean" },
      "plant-violation": { type: "boolean" },
      logs: { type: "string" },
    },
  });
  const minutes = Number(values.minutes ?? "10");
  const seed = values.seed === undefined ? randomInt(1, 2 ** 31) : Number(values.seed);
  const participants = Number(values.participants ?? "20");
  if (!(minutes > 0) || !Number.isInteger(seed) || !(participants >= 2 && Number.isInteger(participants))) {
    throw new Error("usage: npm run chaos -- [--minutes 10] [--seed N] [--participants 20] [--steps split,equivalence] [--json file] [--no-build] [--plant-violation]");
  }
  // The long form runs three steps (each imports torch and trains a little); the short one the first.
  const steps = (values.steps ?? (minutes >= 5 ? "split,equivalence,replication" : "split")).split(",").filter((step) => step !== "" && step !== "none");
  return { minutes, seed, participants, steps, json: values.json ?? null, build: !values["no-build"], plant: values["plant-violation"] === true, logs: values.logs ?? null };
}

const startedAt = Date.now();
let phaseStart: number | null = null;
function say(line: string): void {
  const at = phaseStart === null ? `setup ${((Date.now() - startedAt) / 1000).toFixed(1)} s` : `t=${((Date.now() - phaseStart) / 1000).toFixed(1)} s`;
  console.log(`[chaos ${at}] ${line}`);
}

async function main(): Promise<number> {
  const options = readOptions(process.argv.slice(2));
  const durationMs = Math.round(options.minutes * 60_000);
  const schedule = makeSchedule(options.seed, durationMs);
  console.log(`chaos run: seed ${options.seed}, ${options.minutes} minute(s), ${options.participants} participants, steps ${options.steps.join(", ") || "none"}`);
  console.log(`replay: npm run chaos -- --seed ${options.seed} --minutes ${options.minutes}${options.participants !== 20 ? ` --participants ${options.participants}` : ""}`);
  console.log(`schedule (${schedule.length} faults; each fires at its time or once the previous fault's part is back, whichever is later):`);
  for (const fault of schedule) console.log(`  ${describePlanned(fault)}`);

  // Everything started from here on carries the marker: what is left at the end is found by it.
  const runId = randomBytes(6).toString("hex");
  process.env[MARKER] = runId;
  // This runner's own helpers (tsx's esbuild service) are not the lab's.
  const ownHelpers = new Set(descendants(process.pid));
  if (options.build) execFileSync("bash", ["-c", "source scripts/lib.sh && ensure_next_build"], { cwd: ROOT, stdio: "inherit" });

  const violations: CheckResult["violations"] = [];
  const notes: string[] = [];
  const faults: FaultRecord[] = [];
  let result: CheckResult | null = null;
  let selfTest: string | null = null;
  let cluster: ChaosCluster | null = null;
  const participants: Participant[] = [];
  let consolePage: WorkshopConsoleController | null = null;
  try {
    cluster = await ChaosCluster.start(say);
    const lab = cluster;
    // --- the facilitator makes the workshop and keeps its console open -------------------------------------
    const admin = await connectClient(lab.publicUrl, lab.adminCookie);
    const email = "facilitator@chaos.example";
    const password = "chaos-facilitator-password";
    const made = await admin.sendLab({ op: "create-user", name: "Facilitator", email, password, role: "facilitator" });
    admin.close();
    if (!made.ok) throw new Error(`create-user: ${made.error}`);
    const facilitatorCookie = await signIn(lab.publicUrl, email, password);
    const facilitator = await connectClient(lab.publicUrl, facilitatorCookie);
    const created = await facilitator.sendLab({ op: "create-workshop", title: `Chaos ${options.seed}`, scenarioIds: [SCENARIO], capacity: options.participants });
    facilitator.close();
    if (!created.ok || !created.workshop) throw new Error(`create-workshop: ${created.ok ? "no workshop" : created.error}`);
    const workshop = created.workshop;
    say(`workshop ${workshop.joinCode} made by the facilitator`);
    consolePage = new WorkshopConsoleController(workshop.id, new SocketLabTransport(() => io(lab.publicUrl, { transports: ["websocket"], forceNew: true, reconnectionDelay: 500, reconnectionDelayMax: 5_000, extraHeaders: { cookie: facilitatorCookie } })));
    consolePage.start();

    // --- the class joins by code and opens their copies ------------------------------------------------------
    for (let index = 0; index < options.participants; index += 1) {
      participants.push(new Participant(index, seededRandom(derivedSeed(options.seed, index)), lab.publicUrl, options.steps, say));
    }
    await Promise.all(participants.map((participant) => participant.join(workshop.joinCode)));
    say(`${participants.length} participants joined; opening their copies`);
    await Promise.all(participants.map((participant) => participant.prepare()));
    say("every copy open, light parameters set, scratch cells saved");

    // --- the chaos phase: the class works while the schedule strikes -----------------------------------------
    phaseStart = Date.now();
    const deadline = phaseStart + durationMs;
    say(`the class works for ${options.minutes} minute(s)`);
    const work = Promise.all(participants.map((participant) => participant.work(deadline)));
    for (const planned of schedule) {
      const wait = phaseStart + planned.atMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const record = await fireFault(planned, lab, participants);
      faults.push(record);
      say(`fault #${planned.index} ${planned.kind}: ${record.error ? `NOT DONE (${record.error}): ` : ""}${record.detail} (back after ${((record.endedAt - record.at) / 1000).toFixed(1)} s)`);
    }
    await work;
    say("the class stopped; letting the lab settle");

    // --- settle: every run ended in the database, every page showing what is stored ----------------------------
    const notebookIds = participants.map((participant) => participant.notebookId);
    const settled = await pollUntilAsync(
      "every execution to end",
      async () => {
        const records = await readLabRecords(lab.databaseUrl, notebookIds);
        return records.executions.every((execution) => execution.status !== "queued" && execution.status !== "running") ? records : null;
      },
      SETTLE_LIMIT_MS,
      1_000,
    ).catch((error: unknown) => {
      notes.push(`bound hit: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    });
    const records: LabRecords = settled ?? (await readLabRecords(lab.databaseUrl, notebookIds));
    const pages = await Promise.all(participants.map((participant) => pageAtEnd(participant, records, lab.publicUrl)));
    const consoleAtEnd = await consoleState(consolePage, workshop.id, facilitatorCookie, lab.publicUrl);
    const input: CheckInput = {
      runs: participants.flatMap((participant) => participant.runs),
      predictions: participants.flatMap((participant) => participant.predictions),
      seen: participants.flatMap((participant) => [...participant.seen.values()].map((seen) => ({ ...seen, participant: participant.index, notebookId: participant.notebookId }))),
      faults,
      records,
      pages,
      console: consoleAtEnd,
      participants: participants.map((participant) => ({ index: participant.index, userId: participant.userId, notebookId: participant.notebookId })),
    };
    result = check(input);
    violations.push(...result.violations);
    for (const participant of participants) for (const run of participant.runs) if (run.boundHit) notes.push(`bound hit: ${run.boundHit}`);
    for (const page of pages) if (page.boundHit) notes.push(`bound hit: P${page.participant + 1}: ${page.boundHit}`);
    if (consoleAtEnd.boundHit) notes.push(`bound hit: ${consoleAtEnd.boundHit}`);

    if (options.plant) selfTest = await plantAndCheck(input, lab.databaseUrl, notebookIds);

    // --- the end: the facilitator ends the workshop, everything stops, nothing is left running ----------------
    // Not a check: ending shuts the class's kernels down one by one, which may take long on a loaded machine.
    const ender = await connectClient(lab.publicUrl, facilitatorCookie);
    const endBegan = Date.now();
    const ended = await ender.socket.timeout(END_LIMIT_MS).emitWithAck("lab:command", { op: "update-workshop", workshopId: workshop.id, end: true }).catch((error: unknown) => ({ ok: false as const, error: String(error) }));
    ender.close();
    say(`the facilitator ended the workshop (${((Date.now() - endBegan) / 1000).toFixed(1)} s)`);
    if (!ended.ok) notes.push(`ending the workshop failed after ${((Date.now() - endBegan) / 1000).toFixed(1)} s: ${ended.error} (its kernels end with the agent's lease)`);
  } catch (error) {
    violations.push({ check: "the run itself", what: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  } finally {
    for (const participant of participants) participant.stop();
    consolePage?.stop();
    if (cluster && (options.logs !== null || violations.length > 0)) {
      const dir = options.logs ?? path.join(tmpdir(), `mgpulab-chaos-${options.seed}-${runId}`);
      cluster.saveLogs(dir);
      notes.push(`the servers' and the agent's logs are in ${dir}`);
    }
    if (cluster) await cluster.stop().catch((error: unknown) => violations.push({ check: "every process gone", what: `stopping the cluster failed: ${String(error)}` }));
    for (const leftover of await leftovers(runId, ownHelpers)) violations.push({ check: "every process gone", what: leftover });
  }

  report(options, faults, result, violations, notes, selfTest);
  if (options.json) writeFileSync(options.json, `${JSON.stringify({ seed: options.seed, minutes: options.minutes, participants: options.participants, steps: options.steps, faults, figures: result?.figures ?? null, explained: result?.explained ?? [], violations, notes, selfTest }, null, 2)}\n`);
  const selfTestFailed = options.plant && (selfTest === null || !selfTest.startsWith("caught"));
  return violations.length > 0 || selfTestFailed ? 1 : 0;
}

/** The participant's live page once it shows what is stored (or at the bound, said), and a fresh page. */
async function pageAtEnd(participant: Participant, records: LabRecords, publicUrl: string): Promise<PageAtEnd> {
  const cells = records.cells.filter((cell) => cell.notebookId === participant.notebookId);
  const predictions = records.predictions.filter((row) => row.notebookId === participant.notebookId);
  const same = (): boolean => {
    const doc = participant.page?.getState().doc;
    return doc !== null && doc !== undefined && participant.page?.getState().connection.status === "connected" && documentDifferences(doc, cells, predictions).length === 0;
  };
  const converged = await participant.waitForPage(same, CONVERGE_LIMIT_MS);
  const live = participant.page?.getState().doc ?? null;
  const client = await connectClient(publicUrl, participant.cookieValue);
  const opened = await client.send({ op: "open", notebookId: participant.notebookId });
  client.close();
  return {
    participant: participant.index,
    notebookId: participant.notebookId,
    userId: participant.userId,
    live,
    fresh: opened.ok ? (opened.notebook ?? null) : null,
    boundHit: converged ? null : `the live page did not show the stored notebook within ${CONVERGE_LIMIT_MS / 1000} s (connection ${participant.page?.getState().connection.status})`,
  };
}

/** The console kept open (once it counts what a fresh one does, or at the bound) and a fresh one. */
async function consoleState(page: WorkshopConsoleController, workshopId: string, cookie: string, publicUrl: string): Promise<ConsoleAtEnd> {
  const client = await connectClient(publicUrl, cookie);
  const asked = await client.sendLab({ op: "workshop-console", workshopId });
  client.close();
  const fresh = asked.ok ? (asked.console ?? null) : null;
  const counts = (view: WorkshopConsoleView | null): string => JSON.stringify([view?.tallies.map((tally) => [tally.questionId, tally.predicted]), view?.roster.map((row) => [row.participantId, row.predictions])]);
  const same = (): boolean => fresh !== null && counts(page.getState().view) === counts(fresh);
  const converged = same() || (await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      unsubscribe();
      resolve(false);
    }, CONVERGE_LIMIT_MS);
    const unsubscribe = page.subscribe(() => {
      if (!same()) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(true);
    });
  }));
  return { live: page.getState().view, fresh, boundHit: converged ? null : `the console kept open did not show the fresh console's tallies within ${CONVERGE_LIMIT_MS / 1000} s` };
}

/**
 * The checker's self-test: one line a page showed of a run that ended ok,
 * deleted from the stored output log; the check must now name that line.
 */
async function plantAndCheck(input: CheckInput, databaseUrl: string, notebookIds: string[]): Promise<string> {
  const candidates = input.seen.flatMap((seen) => {
    const execution = input.records.executions.find((each) => each.notebookId === seen.notebookId && each.status === "ok" && streamText(each.outputs).split("\n").includes(seen.line));
    return execution ? [{ seen, execution }] : [];
  });
  for (const { seen, execution } of candidates) {
    let where: string;
    try {
      where = await deleteStoredLine(databaseUrl, execution.id, seen.line);
    } catch {
      continue; // the line straddles two stored chunks: another one
    }
    const again = check({ ...input, records: await readLabRecords(databaseUrl, notebookIds) });
    const named = again.violations.filter((violation) => violation.what.includes(seen.line));
    const planted = `deleted "${seen.line}" (${where})`;
    return named.length > 0 ? `caught: ${planted}; the checker said: ${named[0]!.what}` : `NOT CAUGHT: ${planted}; the checker found ${again.violations.length} violation(s), none naming it`;
  }
  return "NOT CAUGHT: no stored line to delete (no run ended ok with a line a page showed)";
}

/** Processes the run started that are still there once everything stopped (waiting out the agent's lease first), each killed and named. */
async function leftovers(runId: string, ownHelpers: ReadonlySet<number>): Promise<string[]> {
  const marked = (): number[] => [...new Set([...processesWithEnv(`${MARKER}=${runId}`), ...descendants(process.pid)])].filter((pid) => !ownHelpers.has(pid) && isAlive(pid));
  await pollUntilAsync("every process the run started to end", async () => marked().length === 0, PROCESSES_GONE_LIMIT_MS, 500).catch(() => undefined);
  const left = marked();
  const described = left.map((pid) => `process ${pid} (${commandOf(pid)}) still running ${PROCESSES_GONE_LIMIT_MS / 1000} s after everything stopped: killed`);
  signal(left, "SIGKILL");
  return described;
}

function commandOf(pid: number): string {
  try {
    return execFileSync("ps", ["-o", "args=", "-p", String(pid)], { encoding: "utf8" }).trim().slice(0, 120);
  } catch {
    return "?";
  }
}

function report(options: Options, faults: FaultRecord[], result: CheckResult | null, violations: CheckResult["violations"], notes: string[], selfTest: string | null): void {
  const lines: string[] = ["", `=== chaos run, seed ${options.seed}: what it did ===`];
  for (const fault of faults) {
    const at = phaseStart === null ? "" : `t=${((fault.at - phaseStart) / 1000).toFixed(1)} s`;
    lines.push(`  #${String(fault.index).padStart(2)} ${at.padEnd(10)} ${fault.kind.padEnd(16)} ${fault.error ? `NOT DONE (${fault.error})` : fault.detail}; back after ${((fault.endedAt - fault.at) / 1000).toFixed(1)} s`);
  }
  const done = faults.filter((fault) => fault.error === null);
  lines.push(`  faults done by kind: ${FAULT_KINDS.map((kind) => `${kind} ${done.filter((fault) => fault.kind === kind).length}`).join(", ")} (${done.length} of ${faults.length})`);
  lines.push("", "=== what it found ===");
  if (result) {
    const f = result.figures;
    lines.push(`  executes sent: ${f.executes.ok} taken, ${f.executes.refused} refused, ${f.executes.unknown} unanswered`);
    for (const [said, count] of Object.entries(f.refusals)) lines.push(`    ${count} × ${said}`);
    lines.push(`  executions checked: ${f.executions} (${Object.entries(f.byStatus).map(([status, n]) => `${n} ${status}`).join(", ")})`);
    lines.push(`  output lines checked: ${f.linesSeen} seen on pages, ${f.linesStored} stored; predictions checked: ${f.predictions}; pages compared: ${f.pagesCompared} live + fresh`);
    for (const line of result.explained) lines.push(`  explained: ${line}`);
  }
  for (const note of notes) lines.push(`  note: ${note}`);
  if (selfTest !== null) lines.push(`  checker self-test: ${selfTest}`);
  lines.push(`  violations: ${violations.length}`);
  for (const violation of violations.slice(0, 200)) lines.push(`  VIOLATION [${violation.check}] ${violation.what}`);
  if (violations.length > 200) lines.push(`  … and ${violations.length - 200} more`);
  console.log(lines.join("\n"));
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
