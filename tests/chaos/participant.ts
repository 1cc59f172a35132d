/**
 * One simulated participant of the chaos run's workshop: joins by code
 * through the balancer, then works in their copy through the notebook
 * page's own model (NotebookController over its socket.io connection, as
 * the browser runs it), so what is recorded as "shown" is what their page
 * showed. They run scenario steps (committing each step's prediction
 * first) and trivial cells whose every output line is unique, wait for each
 * run to end the way a person watches a cell, and never click Run on a page
 * that says it is reconnecting.
 *
 * Everything they did and saw is kept for the checker: each execute with
 * the server's answer, the lines the page showed while cells ran, and the
 * result each run showed when it ended.
 */
import { io } from "socket.io-client";
import { NotebookController } from "../../components/notebook/model/notebook-controller";
import type { NotebookSocket } from "../../components/notebook/model/connection";
import { NOTEBOOK_SOCKET_OPTIONS } from "../../components/notebook/model/socket-link";
import type { Cell, CellOutput, NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { NotebookAnswer, NotebookOp } from "../../server/core/protocol/ops-notebook";
import { joinWorkshop } from "../helpers/lab-session";
import { connectClient } from "../helpers/socket-harness";

export const SCENARIO = "dp-basics";
/** Small enough for 20 kernels on two cores (tests/bench/workshop-load.ts): one device, a tiny MLP, every step inside the kernel. */
export const LIGHT_PARAMETERS = { batch_size: 8, devices: 1, hidden: 8, d_in: 4, steps: 1, timing_repeats: 2, compare_ddp: false };

/** A person waits this long for a page to come back or a run to end before giving up on it (said in the report when it happens). */
const PAGE_BOUND_MS = 240_000;
/** A step imports torch and trains: on a shared two-core machine with 20 kernels, minutes. */
const STEP_BOUND_MS = 600_000;

/** What the server answered to an execute or a prediction, as the page learned it. */
export type Answer =
  | { kind: "ok" }
  /** The server said no (or the page did not send it): nothing may have run. */
  | { kind: "refused"; error: string }
  /** No answer came (timed out, or the connection dropped): it may or may not have run, at most once. */
  | { kind: "unknown"; error: string };

/** One cell of a run and what it must produce. */
export interface CellRun {
  cellId: string;
  source: string;
  kind: "quick" | "sleepy" | "step";
  /** The tagged lines it prints, in order (none for a step: its text is compared with what the page showed). */
  lines: string[];
  /** text/plain of its result (quick cells). */
  result: string | null;
  /** It sleeps at least this long: the kernel's own clock cannot say less. */
  minMs: number;
}

/** What the page showed of a cell once its run ended. */
export interface ShownResult {
  cellId: string;
  executionId: string | null;
  runState: Cell["runState"];
  lastRun: Cell["lastRun"];
  text: string;
  result: string | null;
}

export interface RunRecord {
  participant: number;
  notebookId: string;
  /** "P03 r012" (in every line the run prints), "P03 r012+P03 r013" for two cells, "P03 step split". */
  tag: string;
  cells: CellRun[];
  /** Wall time (epoch ms) the execute was sent and answered. */
  sentAt: number;
  answeredAt: number;
  answer: Answer;
  /** The page's view of each cell when the participant stopped watching; null for a run not taken. */
  shown: ShownResult[] | null;
  /** The participant stopped watching at the bound, not because the page showed the end. */
  boundHit: string | null;
}

export interface PredictionRecord {
  participant: number;
  userId: string;
  notebookId: string;
  questionId: string;
  choice: string;
  answer: Answer;
}

/** Everything a participant's page showed of one tagged line: which execution the cell showed with it. */
export interface SeenLine {
  line: string;
  cellId: string;
  executionId: string | null;
}

/** The stream text of a cell's outputs, as the page prints it. */
export function streamText(outputs: readonly CellOutput[]): string {
  return outputs.map((output) => (output.kind === "stream" ? output.text : "")).join("");
}

/** text/plain of a cell's result output, if it has one. */
export function resultText(outputs: readonly CellOutput[]): string | null {
  const result = outputs.find((output) => output.kind === "result");
  return result && result.kind === "result" ? (result.data["text/plain"] ?? null) : null;
}

/** The server's answer, or why there was none. */
export function classifyAnswer(ack: NotebookAnswer<NotebookOp> | null): Answer {
  if (ack === null) return { kind: "refused", error: "the page did not send it" };
  if (ack.ok) return { kind: "ok" };
  // No answer came, to the page (connection.ts NO_ANSWER) or to the server that forwarded it to the notebook's
  // driver (server-link.ts: the reply may be what was lost): it may have run.
  if (/no answer from the server|did not answer within/.test(ack.error)) return { kind: "unknown", error: ack.error };
  return { kind: "refused", error: `${ack.code}: ${ack.error}` };
}

const TAG = /^P\d{2} r\d{3} /;

export class Participant {
  readonly runs: RunRecord[] = [];
  readonly predictions: PredictionRecord[] = [];
  readonly seen = new Map<string, SeenLine>();
  /** Every connection the page opened (a reconnect reuses one; the chaos drops them). */
  private socket: NotebookSocket | null = null;
  private cookie = "";
  userId = "";
  notebookId = "";
  page: NotebookController | null = null;
  private scratch: [string, string] = ["", ""];
  /**
   * Cells whose run is watched: the last-run record the page showed while
   * the run was queued or running (a new one, once idle, is this run's end),
   * and whether the page showed it busy at all.
   */
  private readonly watched = new Map<string, { reference: Cell["lastRun"]; busySeen: boolean }>();
  private runCount = 0;
  private stepsLeft: string[];
  /** Why this participant stopped early (a bound hit on setup), if they did. */
  stopped: string | null = null;

  constructor(
    readonly index: number,
    private readonly random: () => number,
    private readonly publicUrl: string,
    steps: readonly string[],
    private readonly say: (line: string) => void,
  ) {
    this.stepsLeft = [...steps];
  }

  get name(): string {
    return `P${String(this.index + 1).padStart(2, "0")}`;
  }

  /** Joins by code (retrying as a person would while the lab answers errors), and opens their copy's page. */
  async join(code: string): Promise<void> {
    this.cookie = await retry(`${this.name} joins`, () => joinWorkshop(this.publicUrl, code, `Participant ${this.index + 1}`));
    const who = await retry(`${this.name} lists their notebooks`, async () => {
      const client = await connectClient(this.publicUrl, this.cookie);
      try {
        const me = await client.sendLab({ op: "whoami" });
        const listed = await client.sendLab({ op: "list-notebooks" });
        if (!me.ok || !me.me || !listed.ok || !listed.notebooks) throw new Error(`whoami/list-notebooks: ${JSON.stringify([me, listed]).slice(0, 200)}`);
        const copy = listed.notebooks[0];
        if (!copy) throw new Error("no copy yet");
        return { userId: me.me.id, notebookId: copy.id };
      } finally {
        client.close();
      }
    });
    this.userId = who.userId;
    this.notebookId = who.notebookId;
    this.page = new NotebookController(this.notebookId, {
      schedule: (run) => setTimeout(run, 0),
      connection: {
        drafts: null,
        createSocket: () => {
          // What the app's page uses (socket-link.ts), with the session cookie a browser would send.
          const socket: NotebookSocket = io(this.publicUrl, { ...NOTEBOOK_SOCKET_OPTIONS, forceNew: true, extraHeaders: { cookie: this.cookie } });
          this.socket = socket;
          return socket;
        },
      },
    });
    this.page.subscribe(() => this.recordSeen());
    this.page.start();
  }

  /** Light parameters (one device) and two scratch cells for trivial runs, saved before the class starts. */
  async prepare(): Promise<void> {
    const page = this.requirePage();
    await this.until("the page opens", () => page.getState().connection.status === "connected" && page.getState().doc !== null, PAGE_BOUND_MS, true);
    const templated = page.getState().doc!.cells.find((cell) => cell.kind === "code" && cell.template !== null);
    if (!templated) throw new Error(`${this.name}: the copy has no templated cell`);
    page.setParameters(templated.id, LIGHT_PARAMETERS);
    await this.until("the light parameters", () => page.getState().doc?.cells.find((cell) => cell.id === templated.id)?.template?.parameters.devices === 1, PAGE_BOUND_MS, true);
    const count = page.getState().doc!.cells.length;
    this.scratch = [page.insertCell(count, "code"), page.insertCell(count + 1, "code")];
    await this.until("the scratch cells saved", () => page.getState().save.state === "saved" && page.getState().unsavedCells === 0, PAGE_BOUND_MS, true);
  }

  /** Works until `deadline` (epoch ms): think, then a step or a trivial run, and watch it end. */
  async work(deadline: number): Promise<void> {
    while (Date.now() < deadline && this.stopped === null) {
      await sleep(500 + this.random() * 2_500);
      if (Date.now() >= deadline) break;
      const page = this.requirePage();
      // Nobody presses Run on a page that says it is reconnecting.
      if (!(await this.until("the page to reconnect", () => page.getState().connection.status === "connected" && page.getState().doc !== null, PAGE_BOUND_MS))) continue;
      const roll = this.random();
      if (this.stepsLeft.length > 0 && roll < 0.2) await this.runStep(this.stepsLeft.shift()!);
      else if (roll < 0.55) await this.runTrivial([this.quick(this.scratch[0])]);
      else if (roll < 0.85) await this.runTrivial([this.sleepy(this.scratch[0])]);
      else await this.runTrivial([this.sleepy(this.scratch[0]), this.quick(this.scratch[1])]);
    }
  }

  /** The socket the page uses now: the chaos drops it. */
  get connection(): NotebookSocket | null {
    return this.socket;
  }

  /** The kernel the page shows, when it shows one running: its pid and whether it is busy. */
  kernelShown(): { pid: number; busy: boolean } | null {
    const kernel = this.page?.getState().doc?.kernel;
    if (!kernel || !("info" in kernel)) return null;
    return { pid: kernel.info.pid, busy: kernel.state === "busy" };
  }

  stop(): void {
    this.page?.stop();
  }

  /** The session cookie the join gave (a fresh page of theirs uses it). */
  get cookieValue(): string {
    return this.cookie;
  }

  /** Waits, on the page's own notifications, until what it shows satisfies `test`; false at the bound. */
  waitForPage(test: () => boolean, limitMs: number): Promise<boolean> {
    return this.until("the page", test, limitMs);
  }

  private nextTag(): string {
    this.runCount += 1;
    return `${this.name} r${String(this.runCount).padStart(3, "0")}`;
  }

  private quick(cellId: string): CellRun {
    const tag = this.nextTag();
    const value = 1000 + this.runCount;
    return { cellId, kind: "quick", source: `print("${tag} quick")\n${value}`, lines: [`${tag} quick`], result: String(value), minMs: 0 };
  }

  private sleepy(cellId: string): CellRun {
    const tag = this.nextTag();
    const count = 3 + Math.floor(this.random() * 5);
    const pause = Math.round(300 + this.random() * 300);
    const source = `import time\nfor i in range(${count}):\n    print(f"${tag} line {i}", flush=True)\n    time.sleep(${pause / 1000})`;
    return { cellId, kind: "sleepy", source, lines: Array.from({ length: count }, (_, i) => `${tag} line ${i}`), result: null, minMs: count * pause };
  }

  /** Types each cell's code, then runs them in one execute (the second queued behind the first), as Run all does. */
  private async runTrivial(cells: CellRun[]): Promise<void> {
    const page = this.requirePage();
    for (const cell of cells) page.editSource(cell.cellId, cell.source);
    await this.execute(cells, cells.map((cell) => cell.lines[0]!.slice(0, 8)).join("+"), PAGE_BOUND_MS);
  }

  private async runStep(step: string): Promise<void> {
    const page = this.requirePage();
    const cell = page.getState().doc?.cells.find((candidate) => candidate.template?.id === `${SCENARIO}/${step}`);
    if (!cell) throw new Error(`${this.name}: no cell for step ${step}`);
    const question = cell.template?.question ?? null;
    if (question && !(question.id in (page.getState().doc?.predictions ?? {}))) {
      const choice = question.choices[Math.floor(this.random() * question.choices.length)]!;
      const answer = classifyAnswer(await page.commitPredictionAnswered(question.id, choice));
      this.predictions.push({ participant: this.index, userId: this.userId, notebookId: this.notebookId, questionId: question.id, choice, answer });
    }
    await this.execute([{ cellId: cell.id, kind: "step", source: cell.source, lines: [], result: null, minMs: 0 }], `${this.name} step ${step}`, STEP_BOUND_MS);
  }

  /** One execute of `cells` through the page, and the wait for its end as the page shows it. */
  private async execute(cells: CellRun[], tag: string, boundMs: number): Promise<void> {
    const page = this.requirePage();
    const before = new Map(cells.map((cell) => [cell.cellId, this.cellShown(cell.cellId)?.executionId ?? null]));
    for (const cell of cells) this.watched.set(cell.cellId, { reference: this.cellShown(cell.cellId)?.lastRun ?? null, busySeen: false });
    const sentAt = Date.now();
    const answer = classifyAnswer(await page.runCellsAnswered(cells.map((cell) => cell.cellId)));
    const record: RunRecord = { participant: this.index, notebookId: this.notebookId, tag, cells, sentAt, answeredAt: Date.now(), answer, shown: null, boundHit: null };
    this.runs.push(record);
    if (answer.kind === "refused") {
      for (const cell of cells) this.watched.delete(cell.cellId);
      return;
    }
    // Ended, as a person sees it: the cell idle again with a new ending ("ok", "aborted"…) after it was
    // queued or running, or after a new execution started in it (the busy moment may fall between two views).
    const ended = (cell: CellRun): boolean => {
      const shown = this.cellShown(cell.cellId);
      const watch = this.watched.get(cell.cellId)!;
      return shown?.runState === "idle" && shown.lastRun !== watch.reference && (watch.busySeen || shown.executionId !== before.get(cell.cellId));
    };
    // An unanswered run may never have started: watch a while, and do not count the wait as a bound hit.
    const limit = answer.kind === "ok" ? boundMs : 20_000;
    const done = await this.until(`the end of ${record.tag}`, () => page.getState().connection.status === "connected" && cells.every(ended), limit);
    if (!done && answer.kind === "ok") record.boundHit = `${this.name}: ${record.tag} did not show its end within ${Math.round(limit / 1000)} s`;
    record.shown = cells.map((cell) => this.shownResult(cell.cellId));
    for (const cell of cells) this.watched.delete(cell.cellId);
  }

  private shownResult(cellId: string): ShownResult {
    const cell = this.cellShown(cellId);
    return { cellId, executionId: cell?.executionId ?? null, runState: cell?.runState ?? "idle", lastRun: cell?.lastRun ?? null, text: cell ? streamText(cell.outputs) : "", result: cell ? resultText(cell.outputs) : null };
  }

  private cellShown(cellId: string): Cell | undefined {
    return this.page?.getState().doc?.cells.find((cell) => cell.id === cellId);
  }

  /** On every view: the watched cells' state, and every tagged line the page shows now, with the execution the cell shows. */
  private recordSeen(): void {
    const doc: NotebookDocument | null | undefined = this.page?.getState().doc;
    if (!doc) return;
    for (const [cellId, watch] of this.watched) {
      const cell = doc.cells.find((candidate) => candidate.id === cellId);
      if (cell && cell.runState !== "idle") {
        watch.reference = cell.lastRun;
        watch.busySeen = true;
      }
    }
    for (const cellId of this.scratch) {
      const cell = doc.cells.find((candidate) => candidate.id === cellId);
      if (!cell) continue;
      const text = streamText(cell.outputs);
      // A line is seen once it is whole (its newline shown).
      const lines = text.split("\n").slice(0, -1);
      for (const line of lines) if (TAG.test(line) && !this.seen.has(line)) this.seen.set(line, { line, cellId, executionId: cell.executionId });
    }
  }

  /** Waits for what the page shows to satisfy `test`; false at `limitMs` (or throws, for setup that cannot go on without it). */
  private until(what: string, test: () => boolean, limitMs: number, required = false): Promise<boolean> {
    const page = this.requirePage();
    if (test()) return Promise.resolve(true);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        unsubscribe();
        if (required) reject(new Error(`${this.name}: waited ${Math.round(limitMs / 1000)} s for ${what}`));
        else {
          this.say(`${this.name}: bound hit: waited ${Math.round(limitMs / 1000)} s for ${what}`);
          resolve(false);
        }
      }, limitMs);
      const unsubscribe = page.subscribe(() => {
        if (!test()) return;
        clearTimeout(timer);
        unsubscribe();
        resolve(true);
      });
    });
  }

  private requirePage(): NotebookController {
    if (!this.page) throw new Error(`${this.name} has not joined`);
    return this.page;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Retries `attempt` while the lab answers errors (a part may be down), up to a generous bound. */
async function retry<T>(what: string, attempt: () => Promise<T>, limitMs = PAGE_BOUND_MS): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() + delay > deadline) throw new Error(`${what}: gave up after ${Math.round(limitMs / 1000)} s: ${error instanceof Error ? error.message : String(error)}`);
      await sleep(delay);
    }
  }
}
