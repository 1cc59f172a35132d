/**
 * The owner's "Share" panel on the notebook page: who the notebook is shared
 * with, sharing it by e-mail for reading or running, and stopping. The
 * commands go over the notebook page's own socket (`send`).
 */
import type { ShareAccess, ShareView } from "../../../server/core/protocol/accounts-model";
import type { LabAnswer, LabOp, LabReply, LabSend } from "../../../server/core/protocol/ops-lab";
import { PolledPage } from "../../shell/model/polling-store";

/** Sends a lab op over the page's socket; resolves with that op's answer. */
export type ShareSend = <Op extends LabOp>(command: LabSend<Op>) => Promise<LabAnswer<Op>>;

export interface SharesState {
  open: boolean;
  status: "loading" | "ready" | "error";
  /** By name. */
  shares: readonly ShareView[];
  error: string | null;
  busy: boolean;
}

export function shareAccessLabel(access: ShareAccess): string {
  return access === "read" ? "can read" : "can read and run";
}

export function sortShares(shares: readonly ShareView[]): ShareView[] {
  return [...shares].sort((a, b) => a.name.localeCompare(b.name) || a.email.localeCompare(b.email));
}

type ListReply = LabReply<"list-shares">;

export class SharesController extends PolledPage<SharesState, ListReply> {
  constructor(
    readonly notebookId: string,
    private readonly send: ShareSend,
  ) {
    super(
      null,
      { open: false, status: "loading", shares: [], error: null, busy: false },
      { what: "Listing the shares", fetch: () => send({ op: "list-shares", notebookId }), apply: (reply) => ({ shares: sortShares(reply.shares) }) },
    );
  }

  /** Opens the panel and lists the shares as they are now (another tab may have changed them). */
  async open(): Promise<void> {
    this.update({ open: true, error: null });
    await this.store.refresh();
  }

  close(): void {
    this.update({ open: false, error: null });
  }

  /** Shares with the user of this e-mail (or changes what they may do); true when the server took it. */
  share(email: string, access: ShareAccess): Promise<boolean> {
    const trimmed = email.trim();
    if (trimmed === "") {
      this.update({ error: "Sharing failed: type the e-mail of the person to share with" });
      return Promise.resolve(false);
    }
    return this.command(trimmed, access, "Sharing");
  }

  /** Stops sharing with them. */
  unshare(email: string): Promise<boolean> {
    return this.command(email, "none", "Stopping the share");
  }


  private async command(email: string, access: ShareAccess | "none", what: string): Promise<boolean> {
    this.update({ busy: true, error: null });
    const ack = await this.send({ op: "share-notebook", notebookId: this.notebookId, email, access });
    this.store.supersede(); // a list asked before this answer is older than it
    this.update({ busy: false });
    if (!ack.ok) {
      this.update({ error: `${what} failed: ${ack.error}` });
      return false;
    }
    this.update({ status: "ready", shares: sortShares(ack.shares) });
    return true;
  }

}
