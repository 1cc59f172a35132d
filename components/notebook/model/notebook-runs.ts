/**
 * Running the notebook's kernel: runs (from the text the server stores, each
 * cell with the hash of the text the user sees, so the server refuses to run
 * anything else), interrupt, restart (asking first when a live kernel's state
 * would be lost) and where the next kernel starts. Separate from the edits:
 * these ops are answered now and never queued behind an outage.
 */
import type { KernelStatus } from "../../../server/core/protocol/notebook-model";
import { sourceHash } from "../../../server/core/protocol/source-hash";
import type { CellConflicts } from "./connection";
import { needOf } from "./notebook-access";
import { quietly, type ControlAnswer, type NotebookSender } from "./notebook-sender";
import type { NotebookViewState } from "./notebook-view-state";
import type { ViewStore } from "../../shell/model/view-store";

export const RESTART_QUESTION = "Restart the kernel? Every variable in this notebook is lost.";

/** Only a running kernel has state a restart would throw away; a dead or stopped one restarts without a question. */
export function restartLosesState(kernel: KernelStatus["state"] | undefined): boolean {
  return kernel === "idle" || kernel === "busy" || kernel === "interrupting";
}

export interface RunsDeps {
  notebookId: string;
  store: ViewStore<NotebookViewState>;
  sender: NotebookSender;
  /** Cells whose edit waits for the user's choice (another tab changed them). */
  conflicts(): CellConflicts;
  notify(message: string): void;
  /** Asks before a restart throws away a live kernel's state. */
  confirm(question: string): boolean;
}

export class NotebookRuns {
  /** Cells the page leaves out (a led workshop's unrevealed steps): "Run all" leaves them out too, as the server would refuse them. */
  private unshown: ReadonlySet<string> = new Set();

  constructor(private readonly deps: RunsDeps) {}

  runAll(): Promise<ControlAnswer | null> {
    return this.run((this.deps.store.getState().doc?.cells ?? []).filter((c) => !this.unshown.has(c.id)).map((c) => c.id));
  }

  setUnshownCells(cellIds: ReadonlySet<string>): void {
    this.unshown = cellIds;
  }

  /**
   * Resolves with the server's answer to the execute (a refusal is also shown
   * as a notice); null when nothing was sent (no code cell, a conflict to
   * settle first, no right to run).
   */
  run(cellIds: readonly string[]): Promise<ControlAnswer | null> {
    const wanted = new Set(cellIds);
    const code = (this.deps.store.getState().doc?.cells ?? []).filter((c) => wanted.has(c.id) && c.kind === "code");
    if (code.length === 0) return Promise.resolve(null);
    // A run takes the stored text: settle a conflict first, never overwrite silently.
    const conflicts = this.deps.conflicts();
    if (code.some((c) => c.id in conflicts)) {
      this.deps.notify("A cell to run was changed in another tab: choose “Use theirs” or “Keep mine” first.");
      return Promise.resolve(null);
    }
    const sourceHashes = Object.fromEntries(code.map((c) => [c.id, sourceHash(c.source)]));
    return this.deps.sender.send({ op: "execute", notebookId: this.deps.notebookId, cellIds: code.map((c) => c.id), sourceHashes });
  }

  interrupt(): void {
    void this.deps.sender.send({ op: "interrupt", notebookId: this.deps.notebookId });
  }

  /** Restarts at once: a dead kernel has nothing left to lose. */
  restart(): void {
    void this.deps.sender.send({ op: "restart", notebookId: this.deps.notebookId });
  }

  /** Restart from the toolbar or 0, 0: a live kernel's state is lost, so ask first (as Jupyter does). */
  requestRestart(): void {
    if (!this.deps.sender.allowed(needOf("restart"))) return;
    if (restartLosesState(this.deps.store.getState().doc?.kernel.state) && !this.deps.confirm(RESTART_QUESTION)) return;
    this.restart();
  }

  /** Where the next kernel starts; resolves with the refusal in words (this viewer's or the server's), or null when it was taken. */
  async setKernelSpec(hostId: string, gpus: number): Promise<string | null> {
    const refusal = this.deps.sender.refusal(needOf("set-kernel-spec"));
    if (refusal !== null) return refusal;
    const answer = await this.deps.sender.send({ op: "set-kernel-spec", notebookId: this.deps.notebookId, hostId, gpus }, quietly);
    return answer === null || answer.ok ? null : answer.error;
  }

  /** Lists the lab's hosts (for the kernel spec form and the GPU names in the header); a failure keeps the last list. */
  async loadHosts(): Promise<void> {
    const answer = await this.deps.sender.sendLab({ op: "list-hosts" }, quietly);
    if (answer.ok) this.deps.store.update({ hosts: answer.hosts });
  }
}
