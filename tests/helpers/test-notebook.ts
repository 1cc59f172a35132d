/**
 * A notebook runtime over a real kernel, with the events its viewers would
 * receive, and waits keyed on those events.
 */
import { localHost } from "../../server/kernel/kernel-host";
import { singleHost } from "../../server/notebook/kernel-hosts";
import { newCell } from "../../server/core/notebook/notebook-state";
import type { OutputBudget } from "../../server/notebook/output-recorder";
import { NotebookRuntime } from "../../server/notebook/notebook-runtime";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";

type Waiter = { test: (event: NotebookEvent) => boolean; wake: (event: NotebookEvent) => void };

export class TestNotebook {
  readonly runtime: NotebookRuntime;
  private readonly waiters: Waiter[] = [];
  private readonly observers: Array<(event: NotebookEvent, seq: number) => void> = [];
  private counter = 0;

  /** A runtime without a database: the kernel-to-viewer path alone. */
  constructor(options: { outputBudget?: OutputBudget } = {}) {
    const doc = { id: `test-${process.pid}`, title: "test", deleted: false, cells: [newCell("c0")], kernel: { state: "not-started" as const }, predictions: {}, kernelSpec: { hostId: "local", gpus: 0 } };
    this.runtime = new NotebookRuntime(doc, {
      hosts: singleHost(localHost()),
      outputBudget: options.outputBudget,
      broadcast: (event, seq) => this.receive(event, seq),
    });
  }

  get notebookId(): string {
    return this.runtime.doc.id;
  }

  /** Sees every event, with its number in the notebook's journal, without keeping it (flood tests). */
  observe(observer: (event: NotebookEvent, seq: number) => void): void {
    this.observers.push(observer);
  }

  waitFor(test: (event: NotebookEvent) => boolean): Promise<NotebookEvent> {
    return new Promise((wake) => this.waiters.push({ test, wake }));
  }

  async addCell(source: string): Promise<string> {
    const cellId = `c${++this.counter}`;
    await this.runtime.handle({ op: "insert-cell", notebookId: this.notebookId, index: this.runtime.doc.cells.length, cell: { id: cellId, kind: "code", source } }, "test");
    return cellId;
  }

  /** Runs a cell and resolves with its cell-finished event. */
  async run(cellId: string): Promise<Extract<NotebookEvent, { type: "cell-finished" }>> {
    const finished = this.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
    await this.runtime.handle({ op: "execute", notebookId: this.notebookId, cellIds: [cellId] }, "test");
    return (await finished) as Extract<NotebookEvent, { type: "cell-finished" }>;
  }

  cell(cellId: string) {
    const cell = this.runtime.doc.cells.find((candidate) => candidate.id === cellId);
    if (!cell) throw new Error(`no cell ${cellId}`);
    return cell;
  }

  async close(): Promise<void> {
    await this.runtime.dispose();
  }

  private receive(event: NotebookEvent, seq: number): void {
    for (const observer of this.observers) observer(event, seq);
    for (const waiter of this.waiters.splice(0)) {
      if (waiter.test(event)) waiter.wake(event);
      else this.waiters.push(waiter);
    }
  }
}
