/**
 * The one way the notebook page sends an op it must hear back about: the
 * viewer's access is checked against the op table's need (the server's own
 * rule), the op goes over the page's socket, and a refusal becomes a notice
 * in the op's own words, unless the caller takes the refusal itself (a form
 * shows it under its fields). Separate from the controller so every intent,
 * whichever piece makes it, is gated and reported the same way.
 */
import type { NotebookAccessLevel } from "../../../server/core/protocol/accounts-model";
import type { LabAnswer, LabOp, LabSend } from "../../../server/core/protocol/ops-lab";
import type { NotebookAnswer, NotebookSend } from "../../../server/core/protocol/ops-notebook";
import type { AssistOp, ControlCommand } from "./connection";
import type { KernelAssist } from "./kernel-assist";
import { labNeedOf, mayDo, needOf, refusedText, type AccessNeed } from "./notebook-access";

export type ControlAnswer = NotebookAnswer<ControlCommand["op"]>;

/** The part of the connection the sender drives. */
export interface CommandTransport {
  sendControl(command: ControlCommand): Promise<ControlAnswer>;
  sendLab<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>>;
  ask<Op extends AssistOp>(command: NotebookSend<Op>): Promise<NotebookAnswer<Op>>;
}

export interface SenderContext {
  /** What this viewer may do, as the server said on opening (null until it has). */
  access(): NotebookAccessLevel | null;
  /** Whether the page shows the notebook yet: intents dropped while it opens need no notice. */
  showing(): boolean;
  notify(message: string): void;
}

/** What becomes of the server's refusal: a notice "<what> failed: <why>" (what: the op's own words by default), or the caller's handler. */
export type OnRefused = { what: string } | ((error: string) => void);

/** A refusal nobody needs to hear of (a background listing keeps what it had). */
export const quietly: OnRefused = () => undefined;

export class NotebookSender {
  constructor(
    private readonly transport: CommandTransport,
    private readonly context: SenderContext,
  ) {}

  /** Whether this viewer may do what an intent needs; a dropped intent says why (a key pressed on a shared notebook). */
  allowed(need: AccessNeed | null): boolean {
    return this.deny(need) === null;
  }

  /** Why this viewer may not do it, in words (for a form that shows it itself), or null when it may. */
  refusal(need: AccessNeed): string | null {
    const access = this.context.access();
    return mayDo(access, need) ? null : refusedText(access, need);
  }

  /** A notebook op answered now (never queued offline); null: this viewer may not, nothing was sent. */
  async send(command: ControlCommand, onRefused: OnRefused = { what: describe(command) }): Promise<ControlAnswer | null> {
    if (!this.allowed(needOf(command.op))) return null;
    const answer = await this.transport.sendControl(command);
    if (!answer.ok) this.refused(answer.error, onRefused);
    return answer;
  }

  /** A lab op over the page's socket (rename, restore, share, listings); one this viewer may not send is refused here, as the server would. */
  async sendLab<Op extends LabOp>(command: LabSend<Op>, onRefused: OnRefused): Promise<LabAnswer<Op>> {
    const denied = this.deny(labNeedOf(command.op));
    if (denied !== null) return { ok: false, error: denied, code: "forbidden" };
    const answer = await this.transport.sendLab(command);
    if (!answer.ok) this.refused(answer.error, onRefused);
    return answer;
  }

  /**
   * The kernel's completions and inspection for the editors (Tab, Shift+Tab).
   * Any failure (offline, refused, slow, busy kernel) is "unavailable": the
   * editor then falls back to words of the cell, it never waits on it.
   */
  kernelAssist(notebookId: string): KernelAssist {
    return {
      complete: async (code, cursor) => {
        const answer = await this.transport.ask({ op: "complete", notebookId, code, cursor });
        return answer.ok ? answer.completion : { status: "unavailable", reason: answer.error };
      },
      inspect: async (code, cursor) => {
        const answer = await this.transport.ask({ op: "inspect", notebookId, code, cursor });
        return answer.ok ? answer.inspection : { status: "unavailable", reason: answer.error };
      },
    };
  }

  /** Why not (shown as a notice once the notebook shows), or null when this viewer may. */
  private deny(need: AccessNeed | null): string | null {
    const why = need === null ? null : this.refusal(need);
    if (why !== null && this.context.showing()) this.context.notify(why);
    return why;
  }

  private refused(error: string, onRefused: OnRefused): void {
    if (typeof onRefused === "function") onRefused(error);
    else this.context.notify(`${onRefused.what} failed: ${error}`);
  }
}

/** A control op in the words of a notice about it. */
export function describe(command: ControlCommand): string {
  switch (command.op) {
    case "execute":
      return command.cellIds.length === 1 ? "Running the cell" : `Running ${command.cellIds.length} cells`;
    case "interrupt":
      return "Interrupt";
    case "restart":
      return "Restart";
    case "shutdown":
      return "Shutdown";
    case "set-parameters":
      return "Changing the parameters";
    case "detach-template":
      return "Detaching the cell";
    case "reattach-template":
      return "Reattaching the cell";
    case "undo-reattach":
      return "Undoing the reattach";
    case "commit-prediction":
      return "Committing the prediction";
    case "set-kernel-spec":
      return "Changing the kernel's host";
  }
}
