/**
 * Loads what the console view needs of one workshop in a handful of
 * queries (its participants, their copies' cells, predictions and the
 * verdict reports their cells showed), whatever the class size. Live state
 * the database does not hold — kernel states, who is connected, which copy
 * each one opened — comes from the callers.
 */
import { predictQuestionSchema, templateGuideSchema, cellOutputsSchema } from "../core/protocol/notebook-schemas";
import { VERDICTS_MIME } from "../core/protocol/metrics-model";
import { verdictReportSchema, type VerdictReport } from "../core/protocol/verdict-model";
import type { ParticipantKernelState, WorkshopBroadcast } from "../core/protocol/workshop-model";
import type { PredictQuestion } from "../core/protocol/notebook-model";
import type { RanCell, WorkshopRosterRepository } from "../persistence/workshop-roster-repository";
import type { StepCell } from "../core/notebook/workshop-steps";
import { judgedOf, type CopyFacts, type ParticipantFacts } from "./console-view";
import { z } from "zod";

export interface LiveFacts {
  /** A notebook's kernel as the roster shows it (not open on this server: "not-started"). */
  kernelOf(notebookId: string): Promise<ParticipantKernelState>;
  online(userId: string): boolean;
  /** The copy the participant opened last on this server, and when. */
  opened?(userId: string): { notebookId: string; at: Date } | null;
}

/**
 * Verdict reports already parsed, by templated cell (an experiment cell's
 * report of its own claims, the verdicts cell's of all), with what
 * identifies the run they came from and when it ended: a cell's outputs are
 * read (megabytes for a class) only when it ran since.
 */
export type VerdictCache = Map<string, { key: string; at: Date; report: VerdictReport | null }>;

/** What is parsed once and kept per workshop: verdict reports (above) and each step cell's question, by its last edit. */
export interface FactsCache {
  verdicts: VerdictCache;
  questions: Map<string, { updatedAt: number; question: PredictQuestion | null }>;
}

export function newFactsCache(): FactsCache {
  return { verdicts: new Map(), questions: new Map() };
}

export async function loadParticipants(roster: WorkshopRosterRepository, workshopId: string, scenarioIds: readonly string[], live: LiveFacts, facts: FactsCache = newFactsCache()): Promise<ParticipantFacts[]> {
  const cache = facts.verdicts;
  const users = await roster.participants(workshopId);
  const notebooks = await roster.copies(workshopId, users.map((user) => user.id));
  const notebookIds = notebooks.map((notebook) => notebook.id);
  const cells = await roster.cells(notebookIds);
  // A question changes only with its cell's template (a form change re-renders it, and bumps updatedAt).
  const asking = cells.filter((cell) => cell.kind === "code" && cell.templateId !== null && facts.questions.get(`${cell.notebookId}/${cell.id}`)?.updatedAt !== cell.updatedAt.getTime());
  if (asking.length > 0) {
    const guides = await roster.guides(asking);
    for (const guide of guides) facts.questions.set(`${guide.notebookId}/${guide.id}`, { updatedAt: guide.updatedAt.getTime(), question: questionOf(guide.templateGuide) });
  }
  // Every templated cell that ran may show a verdict report: an experiment cell judges its claims as it
  // ends, the verdicts cell all of them. Its outputs are re-read only when it ran again or its run ended
  // since (its last execution or how that ended changed): output writes do not touch a cell's updatedAt.
  const verdictCells = await roster.ranCells(notebookIds);
  const keyOf = (cell: RanCell) => `${cell.lastExecutionId}|${JSON.stringify(cell.lastRun)}`;
  const stale = verdictCells.filter((cell) => cache.get(`${cell.notebookId}/${cell.id}`)?.key !== keyOf(cell));
  if (stale.length > 0) {
    const fresh = await roster.outputs(stale);
    const endedAt = await roster.executionEnds(fresh.map((cell) => cell.lastExecutionId!));
    for (const cell of fresh) {
      cache.set(`${cell.notebookId}/${cell.id}`, { key: keyOf(cell), at: endedAt.get(cell.lastExecutionId!) ?? new Date(0), report: verdictReportOf(cell.outputs) });
    }
  }
  // When each copy was last used: edited, or a cell queued to run.
  const lastRunAt = await roster.lastQueuedAt(notebookIds);
  const predictions = await roster.predictions(notebookIds);

  const cellsOf = new Map<string, typeof cells>();
  for (const cell of cells) cellsOf.set(cell.notebookId, [...(cellsOf.get(cell.notebookId) ?? []), cell]);
  const reportsOf = new Map<string, Array<{ at: Date; report: VerdictReport }>>();
  for (const cell of verdictCells) {
    const cached = cache.get(`${cell.notebookId}/${cell.id}`);
    if (cached?.report) reportsOf.set(cell.notebookId, [...(reportsOf.get(cell.notebookId) ?? []), { at: cached.at, report: cached.report }]);
  }
  const order = new Map(scenarioIds.map((id, index) => [id, index]));
  const copiesOf = new Map<string, CopyFacts[]>();
  for (const notebook of notebooks) {
    const rows = (cellsOf.get(notebook.id) ?? []).sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    const stepCells: StepCell[] = rows.map((row) => ({ id: row.id, kind: row.kind === "code" ? "code" : "markdown", template: row.templateId === null ? null : { id: row.templateId }, executionCount: row.executionCount }));
    const edited = rows.reduce((latest, row) => (row.updatedAt > latest ? row.updatedAt : latest), notebook.updatedAt);
    const ran = lastRunAt.get(notebook.id);
    const lastTouched = ran && ran > edited ? ran : edited;
    const copy: CopyFacts = {
      id: notebook.id,
      title: notebook.title,
      scenarioId: scenarioOf(rows.map((row) => row.templateId)),
      updatedAt: lastTouched,
      createdAt: notebook.createdAt,
      cells: stepCells,
      questions: uniqueQuestions(rows.map((row) => facts.questions.get(`${row.notebookId}/${row.id}`)?.question ?? null)),
      judged: judgedOf(reportsOf.get(notebook.id) ?? []),
      kernel: await live.kernelOf(notebook.id),
    };
    copiesOf.set(notebook.ownerId, [...(copiesOf.get(notebook.ownerId) ?? []), copy]);
  }
  return users.map((user) => ({
    id: user.id,
    name: user.name,
    joinedAt: user.createdAt,
    waitingSince: user.waitingSince,
    online: live.online(user.id),
    copies: (copiesOf.get(user.id) ?? []).sort((a, b) => (order.get(a.scenarioId ?? "") ?? 99) - (order.get(b.scenarioId ?? "") ?? 99)),
    predictions: predictions.filter((prediction) => prediction.userId === user.id),
    opened: live.opened?.(user.id) ?? null,
  }));
}

export async function loadBroadcasts(roster: WorkshopRosterRepository, workshopId: string, limit = 50): Promise<WorkshopBroadcast[]> {
  const rows = await roster.broadcasts(workshopId, limit);
  return rows.map((row) => ({ id: row.id, at: row.createdAt.toISOString(), message: row.message, preset: presetOf(row.preset) }));
}

const presetSchema = z.object({ scenarioId: z.string(), values: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])) });

function presetOf(value: unknown): WorkshopBroadcast["preset"] {
  const parsed = presetSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** A copy's scenario: the prefix of its templated cells' ids ("dp-basics/split" → "dp-basics"). */
function scenarioOf(templateIds: ReadonlyArray<string | null>): string | null {
  const first = templateIds.find((id): id is string => id !== null && id.includes("/"));
  return first ? first.slice(0, first.indexOf("/")) : null;
}

/** A step cell's stored "predict first" question (validated: stored JSON is not trusted), or null. */
function questionOf(guide: unknown): PredictQuestion | null {
  if (guide === null || guide === undefined) return null;
  const parsed = templateGuideSchema.shape.question.safeParse((guide as { question?: unknown }).question ?? null);
  return parsed.success && parsed.data !== null ? predictQuestionSchema.parse(parsed.data) : null;
}

function uniqueQuestions(candidates: ReadonlyArray<PredictQuestion | null>): PredictQuestion[] {
  const questions: PredictQuestion[] = [];
  for (const question of candidates) if (question !== null && !questions.some((known) => known.id === question.id)) questions.push(question);
  return questions;
}

/** The verdict report a verdicts cell shows (kernel output: validated before it is believed). */
function verdictReportOf(outputs: unknown): VerdictReport | null {
  const parsed = cellOutputsSchema.safeParse(outputs);
  if (!parsed.success) return null;
  for (const output of [...parsed.data].reverse()) {
    if (output.kind !== "display" && output.kind !== "result") continue;
    const raw = output.data[VERDICTS_MIME];
    if (raw === undefined) continue;
    try {
      const report = verdictReportSchema.safeParse(JSON.parse(raw));
      if (report.success) return report.data;
    } catch {
      // Not JSON: not a report (kernel output is never trusted).
    }
  }
  return null;
}
