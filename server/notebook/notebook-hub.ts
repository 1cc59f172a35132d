/**
 * All open notebooks of this server process. Until persistence lands a
 * notebook lives here, in memory, created on first open.
 */
import type { NotebookDocument } from "../protocol/notebook-model";
import type { NotebookEvent } from "../protocol/socket-api";
import type { KernelHost } from "../kernel/kernel-host";
import { newCell } from "./notebook-ops";
import { NotebookRuntime, type NotebookRuntimeOptions } from "./notebook-runtime";
import { randomUUID } from "node:crypto";

export interface NotebookHubOptions extends Pick<NotebookRuntimeOptions, "outputBudget" | "coalescing" | "log"> {
  host: () => KernelHost;
  broadcast: (notebookId: string, event: NotebookEvent, seq: number) => void;
}

export class NotebookHub {
  private readonly runtimes = new Map<string, NotebookRuntime>();

  constructor(private readonly options: NotebookHubOptions) {}

  open(notebookId: string): NotebookRuntime {
    let runtime = this.runtimes.get(notebookId);
    if (!runtime) {
      const doc: NotebookDocument = {
        id: notebookId,
        title: notebookId,
        cells: [newCell(`cell-${randomUUID().slice(0, 8)}`)],
        kernel: { state: "not-started" },
      };
      runtime = new NotebookRuntime(doc, {
        host: this.options.host,
        outputBudget: this.options.outputBudget,
        coalescing: this.options.coalescing,
        log: this.options.log,
        broadcast: (event, seq) => this.options.broadcast(notebookId, event, seq),
      });
      this.runtimes.set(notebookId, runtime);
    }
    return runtime;
  }

  get(notebookId: string): NotebookRuntime | undefined {
    return this.runtimes.get(notebookId);
  }

  async shutdownAll(): Promise<void> {
    await Promise.all([...this.runtimes.values()].map((runtime) => runtime.dispose()));
    this.runtimes.clear();
  }
}
