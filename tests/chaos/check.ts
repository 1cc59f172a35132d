/**
 * The chaos run's checker: what the participants did and saw, against what
 * the lab's database holds and what fresh pages show, after the lab has
 * settled. Pure: every input is gathered first (run.ts), so each rule is
 * tested on made-up records (tests/unit/chaos-check.test.ts).
 *
 * A fault is judged by the lab's documented promise (README "Kernels
 * outlive the lab server", "Several lab servers"), never by loosening a
 * check: kernels on host agents survive a server's death, a dropped link,
 * Redis and PostgreSQL restarts, so a cell a participant ran ends "ok"
 * unless its own kernel was killed while it ran (then "kernel-died", or
 * "aborted"/"interrupted" with the reason). Every other ending is a
 * violation, said with the lab's stored reason.
 */
import type { CellOutput, NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { WorkshopConsoleView } from "../../server/core/protocol/workshop-model";
import type { FaultKind } from "./schedule";
import type { LabRecords, StoredCell, StoredExecution, StoredPrediction } from "./lab-records";
import { resultText, streamText, type CellRun, type PredictionRecord, type RunRecord, type SeenLine } from "./participant";

export interface FaultRecord {
  index: number;
  kind: FaultKind;
  /** Epoch ms: when it was done, and when its part was back. */
  at: number;
  endedAt: number;
  detail: string;
  /** It could not be done (said, and counted apart). */
  error: string | null;
  /** A killed kernel: whose, and which process. */
  kernel?: { participant: number; notebookId: string; pid: number };
}

/** A participant's page at the end: the live one that went through every fault, and a fresh one. */
export interface PageAtEnd {
  participant: number;
  notebookId: string;
  userId: string;
  live: NotebookDocument | null;
  fresh: NotebookDocument | null;
  /** The live page did not show the stored notebook within the bound: said with what still differed. */
  boundHit: string | null;
}

export interface ConsoleAtEnd {
  /** The facilitator's console that stayed open through every fault. */
  live: WorkshopConsoleView | null;
  /** `workshop-console` asked on a new connection after the run. */
  fresh: WorkshopConsoleView | null;
  boundHit: string | null;
}

export interface CheckInput {
  runs: RunRecord[];
  predictions: PredictionRecord[];
  seen: Array<SeenLine & { participant: number; notebookId: string }>;
  faults: FaultRecord[];
  records: LabRecords;
  pages: PageAtEnd[];
  console: ConsoleAtEnd;
  /** Participants' user ids (the console's tallies count only them). */
  participants: Array<{ index: number; userId: string; notebookId: string }>;
}

export interface Violation {
  check: string;
  what: string;
}

export interface CheckResult {
  violations: Violation[];
  /** Endings other than ok that a fault explains, each with its fault. */
  explained: string[];
  figures: {
    executes: { ok: number; refused: number; unknown: number };
    /** What the lab said when it refused an execute or gave no answer, with ids and numbers blanked, and how often. */
    refusals: Record<string, number>;
    executions: number;
    byStatus: Record<string, number>;
    linesSeen: number;
    linesStored: number;
    predictions: number;
    pagesCompared: number;
  };
}

const TAG = /^P\d{2} r\d{3} /;
/** Slack between this machine's clock readings in the run and the lab's stored times (same clock; writes wait in queues). */
const CLOCK_SLACK_MS = 2_000;

const key = (notebookId: string, cellId: string, source: string): string => `${notebookId}\u0000${cellId}\u0000${source}`;

interface Sent {
  record: RunRecord;
  cell: CellRun;
}

export function check(input: CheckInput): CheckResult {
  const violations: Violation[] = [];
  const explained: string[] = [];
  const flag = (check: string, what: string): void => void violations.push({ check, what });
  const name = (participant: number): string => `P${String(participant + 1).padStart(2, "0")}`;
  const runsById = new Map(input.records.runs.map((run) => [run.id, run]));
  const participantOf = new Map(input.participants.map((participant) => [participant.notebookId, participant.index]));

  for (const problem of input.records.malformed) flag("stored records", problem);

  // --- every execute: exactly one execution when taken, none when refused, at most one when unanswered ----------
  const sent = new Map<string, Sent[]>();
  for (const record of input.runs) {
    for (const cell of record.cells) {
      const k = key(record.notebookId, cell.cellId, cell.source);
      sent.set(k, [...(sent.get(k) ?? []), { record, cell }]);
    }
  }
  const stored = new Map<string, StoredExecution[]>();
  for (const execution of input.records.executions) {
    const k = key(execution.notebookId, execution.cellId, execution.source);
    stored.set(k, [...(stored.get(k) ?? []), execution]);
  }
  const sentOf = new Map<string, Sent>();
  for (const [k, sends] of sent) {
    const executions = stored.get(k) ?? [];
    const ok = sends.filter((each) => each.record.answer.kind === "ok");
    const unknown = sends.filter((each) => each.record.answer.kind === "unknown");
    const refused = sends.filter((each) => each.record.answer.kind === "refused");
    const what = `${name(sends[0]!.record.participant)} ${sends.map((each) => each.record.tag).join(", ")} (cell ${sends[0]!.cell.cellId})`;
    if (executions.length < ok.length) flag("one execution per run", `${what}: the server took ${ok.length} run(s), the database has ${executions.length} execution(s)`);
    if (executions.length > ok.length + unknown.length) {
      const told = refused.map((each) => (each.record.answer.kind === "refused" ? each.record.answer.error : "")).join("; ");
      flag("one execution per run", `${what}: ${executions.length} execution(s) stored for ${ok.length} run(s) the server took${told ? `; the page was told: ${told}` : ""}`);
    }
    // The executions, in order, belong to the sends in order (a cell's source is unique to its run, a step's to its cell).
    executions.forEach((execution, i) => sentOf.set(execution.id, sends[Math.min(i, sends.length - 1)]!));
  }
  for (const [k, executions] of stored) {
    if (sent.has(k)) continue;
    for (const execution of executions) {
      const who = participantOf.get(execution.notebookId);
      flag("one execution per run", `execution ${execution.id} of ${who === undefined ? execution.notebookId : name(who)}'s cell ${execution.cellId} (${JSON.stringify(execution.source.slice(0, 40))}) was run by nobody`);
    }
  }

  // --- each execution's ending, duration and output ---------------------------------------------------------
  const byStatus: Record<string, number> = {};
  let linesStored = 0;
  for (const execution of input.records.executions) {
    byStatus[execution.status] = (byStatus[execution.status] ?? 0) + 1;
    const origin = sentOf.get(execution.id);
    const who = origin ? `${name(origin.record.participant)} ${origin.cell.kind === "step" ? origin.record.tag : origin.cell.lines[0]!.slice(0, 8)}` : `execution ${execution.id}`;
    const run = runsById.get(execution.runId);
    if (execution.status === "queued" || execution.status === "running") {
      flag("every run ends", `${who}: still ${execution.status} in the database after the lab settled`);
      continue;
    }
    if (execution.status !== "ok") {
      const cause = killExplaining(execution, origin?.record.sentAt ?? execution.queuedAt, run?.kernelPid ?? null, input.faults);
      const reason = run?.exitReason ? `; the run's reason: ${run.exitReason}` : "";
      if (execution.status === "interrupted" && !run?.exitReason) flag("right status", `${who}: interrupted, and its run says no reason`);
      if (execution.status === "error") flag("right status", `${who}: error: ${errorText(execution.outputs)}`);
      else if (cause) explained.push(`${who}: ${execution.status}, its kernel (pid ${cause.kernel!.pid}) killed by fault #${cause.index}${reason}`);
      else flag("right status", `${who}: ${execution.status}, and no fault of the run killed its kernel${reason}`);
    }
    if (execution.durationMs === null || execution.durationMs < 0) flag("plausible duration", `${who}: stored duration ${execution.durationMs}`);
    else if (origin) {
      if (execution.status === "ok" && execution.durationMs < origin.cell.minMs - 50) {
        flag("plausible duration", `${who}: stored ${Math.round(execution.durationMs)} ms for a cell that sleeps ${origin.cell.minMs} ms (the kernel's own clock cannot say less)`);
      }
      if (execution.endedAt !== null && execution.durationMs > execution.endedAt - origin.record.sentAt + CLOCK_SLACK_MS) {
        flag("plausible duration", `${who}: stored ${Math.round(execution.durationMs)} ms, but it was sent only ${execution.endedAt - origin.record.sentAt} ms before it ended`);
      }
    }
    if (!origin || origin.cell.kind === "step") continue;
    const text = streamText(execution.outputs);
    const lines = text.split("\n").filter((line) => line !== "");
    const tagged = lines.filter((line) => TAG.test(line));
    linesStored += tagged.length;
    for (const line of lines) if (!TAG.test(line) && !line.startsWith("[kernel] ")) flag("outputs stored once", `${who}: an output line nobody printed: ${JSON.stringify(line.slice(0, 120))}`);
    const expected = origin.cell.lines;
    if (execution.status === "ok") {
      if (tagged.join("\n") !== expected.join("\n")) flag("outputs stored once", `${who}: ok, stored lines ${JSON.stringify(tagged)} instead of ${JSON.stringify(expected)}`);
      if (origin.cell.result !== null && resultText(execution.outputs) !== origin.cell.result) flag("outputs stored once", `${who}: ok, stored result ${JSON.stringify(resultText(execution.outputs))} instead of ${origin.cell.result}`);
    } else if (tagged.join("\n") !== expected.slice(0, tagged.length).join("\n")) {
      flag("outputs stored once", `${who}: ${execution.status}, stored lines ${JSON.stringify(tagged)} are not a start of ${JSON.stringify(expected)}`);
    }
  }

  // --- every line a page showed: stored exactly once in its notebook ------------------------------------------
  const storedLines = new Map<string, Map<string, number>>();
  for (const execution of input.records.executions) {
    let counts = storedLines.get(execution.notebookId);
    if (!counts) storedLines.set(execution.notebookId, (counts = new Map()));
    for (const line of streamText(execution.outputs).split("\n")) if (TAG.test(line)) counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  for (const seen of input.seen) {
    const count = storedLines.get(seen.notebookId)?.get(seen.line) ?? 0;
    if (count !== 1) flag("outputs stored once", `${name(seen.participant)}'s page showed "${seen.line}"; the database has it ${count === 0 ? "nowhere" : `${count} times`}`);
  }

  // --- what each page showed when a run ended is what the database says of that execution -------------------
  const executionsById = new Map(input.records.executions.map((execution) => [execution.id, execution]));
  for (const record of input.runs) {
    if (record.answer.kind !== "ok" || record.shown === null || record.boundHit !== null) continue;
    for (const shown of record.shown) {
      const cell = record.cells.find((each) => each.cellId === shown.cellId)!;
      const what = `${name(record.participant)} ${record.tag}`;
      const execution = shown.executionId === null ? undefined : executionsById.get(shown.executionId);
      if (!execution) {
        flag("pages show what is stored", `${what}: the page showed the run's end on execution ${shown.executionId}, which the database does not have`);
        continue;
      }
      if (execution.source !== cell.source) {
        flag("pages show what is stored", `${what}: the page showed the run end (${shown.lastRun?.status ?? "no status"}) on execution ${execution.id}, which is another run's (${JSON.stringify(execution.source.slice(0, 40))}): the database keeps no record of this run's end`);
        continue;
      }
      if (shown.lastRun?.status !== execution.status) flag("pages show what is stored", `${what}: the page showed ${shown.lastRun?.status ?? "no ending"}, the database says ${execution.status}`);
      else if (execution.durationMs === null || Math.abs(shown.lastRun.durationMs - execution.durationMs) > 1) flag("pages show what is stored", `${what}: the page showed ${shown.lastRun.durationMs} ms, the database says ${execution.durationMs} ms`);
      // A cell that never started (aborted in the queue) goes on showing its previous outputs, as its stored cell does.
      if (execution.startedAt === null) continue;
      if (shown.text !== streamText(execution.outputs)) flag("pages show what is stored", `${what}: the page showed ${JSON.stringify(shown.text.slice(-200))}, the database has ${JSON.stringify(streamText(execution.outputs).slice(-200))}`);
      if (shown.result !== resultText(execution.outputs)) flag("pages show what is stored", `${what}: the page showed the result ${JSON.stringify(shown.result)}, the database has ${JSON.stringify(resultText(execution.outputs))}`);
    }
  }

  // --- predictions: stored as answered, and counted in the console ----------------------------------------------
  const storedPrediction = (notebookId: string, questionId: string): StoredPrediction | undefined =>
    input.records.predictions.find((row) => row.notebookId === notebookId && row.questionId === questionId);
  for (const prediction of input.predictions) {
    const row = storedPrediction(prediction.notebookId, prediction.questionId);
    const what = `${name(prediction.participant)}'s prediction ${prediction.questionId} = ${prediction.choice}`;
    if (prediction.answer.kind === "ok" && row?.choice !== prediction.choice) flag("predictions counted", `${what}: committed, the database has ${row ? row.choice : "none"}`);
    if (prediction.answer.kind === "unknown" && row && row.choice !== prediction.choice) flag("predictions counted", `${what}: unanswered, the database has ${row.choice}`);
    if (prediction.answer.kind === "refused" && row && !input.predictions.some((other) => other !== prediction && other.notebookId === prediction.notebookId && other.questionId === prediction.questionId && other.answer.kind !== "refused")) {
      flag("predictions counted", `${what}: the page was told it failed (${prediction.answer.error}), the database has ${row.choice}`);
    }
  }
  const participantIds = new Set(input.participants.map((participant) => participant.userId));
  const classRows = input.records.predictions.filter((row) => participantIds.has(row.userId));
  for (const row of classRows) {
    if (!input.predictions.some((prediction) => prediction.notebookId === row.notebookId && prediction.questionId === row.questionId && prediction.answer.kind !== "refused")) {
      flag("predictions counted", `the database has a prediction ${row.questionId} = ${row.choice} in ${row.notebookId} that no participant committed`);
    }
  }
  for (const [label, view] of [["the console (fresh)", input.console.fresh], ["the console kept open", input.console.live]] as const) {
    if (!view) {
      flag("predictions counted", `${label}: no view${label.includes("open") && input.console.boundHit ? ` (${input.console.boundHit})` : ""}`);
      continue;
    }
    for (const row of classRows) {
      const tally = view.tallies.find((each) => each.questionId === row.questionId);
      if (!tally) {
        flag("predictions counted", `${label}: no tally for ${row.questionId}, which has predictions`);
        continue;
      }
      const rosterRow = view.roster.find((each) => each.participantId === row.userId);
      if (rosterRow?.predictions[row.questionId] !== row.choice) flag("predictions counted", `${label}: the roster row of ${row.userId} does not show ${row.questionId} = ${row.choice}`);
    }
    for (const tally of view.tallies) {
      tally.choices.forEach((choice, i) => {
        const want = classRows.filter((row) => row.questionId === tally.questionId && row.choice === choice).length;
        if (tally.predicted[i] !== want) flag("predictions counted", `${label}: tally ${tally.questionId} "${choice}" counts ${tally.predicted[i]}, the database has ${want}`);
      });
    }
  }

  // --- no page shows a state the database does not have ------------------------------------------------------
  for (const page of input.pages) {
    const cells = input.records.cells.filter((cell) => cell.notebookId === page.notebookId);
    const predictions = input.records.predictions.filter((row) => row.notebookId === page.notebookId);
    for (const [label, doc] of [["live page", page.live], ["fresh page", page.fresh]] as const) {
      if (!doc) {
        flag("pages show what is stored", `${name(page.participant)}'s ${label}: no notebook shown`);
        continue;
      }
      for (const difference of documentDifferences(doc, cells, predictions)) flag("pages show what is stored", `${name(page.participant)}'s ${label}: ${difference}`);
    }
    if (page.boundHit) flag("pages show what is stored", `${name(page.participant)}: ${page.boundHit}`);
  }

  const answers = { ok: 0, refused: 0, unknown: 0 };
  const refusals: Record<string, number> = {};
  for (const record of input.runs) {
    answers[record.answer.kind] += 1;
    if (record.answer.kind === "ok") continue;
    const said = record.answer.error.replace(/\b[0-9a-f]{8,}\b|\d+/g, "#");
    refusals[said] = (refusals[said] ?? 0) + 1;
  }
  return {
    violations,
    explained,
    figures: {
      executes: answers,
      refusals,
      executions: input.records.executions.length,
      byStatus,
      linesSeen: input.seen.length,
      linesStored,
      predictions: classRows.length,
      pagesCompared: input.pages.filter((page) => page.live !== null).length,
    },
  };
}

/** The kernel kill (of this execution's kernel, while it was queued or running) that explains an ending other than ok. */
function killExplaining(execution: StoredExecution, sentAt: number, kernelPid: number | null, faults: readonly FaultRecord[]): FaultRecord | undefined {
  return faults.find(
    (fault) =>
      fault.kind === "kernel-kill" &&
      fault.kernel !== undefined &&
      fault.error === null &&
      fault.kernel.notebookId === execution.notebookId &&
      (kernelPid === null || fault.kernel.pid === kernelPid) &&
      fault.at >= sentAt - CLOCK_SLACK_MS &&
      fault.at <= (execution.endedAt ?? Number.POSITIVE_INFINITY) + CLOCK_SLACK_MS,
  );
}

function errorText(outputs: readonly CellOutput[]): string {
  const error = outputs.find((output) => output.kind === "error");
  return error && error.kind === "error" ? `${error.ename}: ${error.evalue}` : "(no error output stored)";
}

/** Where a notebook as a page shows it differs from the stored cells and predictions (empty: the same). */
export function documentDifferences(doc: NotebookDocument, cells: readonly StoredCell[], predictions: readonly StoredPrediction[]): string[] {
  const out: string[] = [];
  for (const cell of cells) {
    const shown = doc.cells.find((each) => each.id === cell.id);
    if (!shown) {
      out.push(`cell ${cell.id} is stored but not shown`);
      continue;
    }
    const at = `cell ${cell.id}`;
    if (shown.source !== cell.source) out.push(`${at}: shows source ${JSON.stringify(shown.source.slice(0, 60))}, stored ${JSON.stringify(cell.source.slice(0, 60))}`);
    if (shown.runState !== "idle") out.push(`${at}: shows ${shown.runState}`);
    if (shown.executionCount !== cell.executionCount) out.push(`${at}: shows execution count ${shown.executionCount}, stored ${cell.executionCount}`);
    if ((shown.lastRun?.status ?? null) !== (cell.lastRun?.status ?? null)) out.push(`${at}: shows last run ${shown.lastRun?.status ?? "none"}, stored ${cell.lastRun?.status ?? "none"}`);
    else if (shown.lastRun && cell.lastRun && Math.abs(shown.lastRun.durationMs - cell.lastRun.durationMs) > 1) out.push(`${at}: shows ${shown.lastRun.durationMs} ms, stored ${cell.lastRun.durationMs} ms`);
    if (cell.lastExecutionId !== null && shown.executionId !== cell.lastExecutionId) out.push(`${at}: shows execution ${shown.executionId}, stored ${cell.lastExecutionId}`);
    if (streamText(shown.outputs) !== streamText(cell.outputs)) out.push(`${at}: shows ${JSON.stringify(streamText(shown.outputs).slice(-120))}, stored ${JSON.stringify(streamText(cell.outputs).slice(-120))}`);
    if (resultText(shown.outputs) !== resultText(cell.outputs)) out.push(`${at}: shows result ${JSON.stringify(resultText(shown.outputs))}, stored ${JSON.stringify(resultText(cell.outputs))}`);
  }
  for (const shown of doc.cells) if (!cells.some((cell) => cell.id === shown.id)) out.push(`cell ${shown.id} is shown but not stored`);
  for (const row of predictions) if (doc.predictions[row.questionId]?.choice !== row.choice) out.push(`prediction ${row.questionId}: shows ${doc.predictions[row.questionId]?.choice ?? "none"}, stored ${row.choice}`);
  for (const questionId of Object.keys(doc.predictions)) if (!predictions.some((row) => row.questionId === questionId)) out.push(`prediction ${questionId} is shown but not stored`);
  return out;
}
