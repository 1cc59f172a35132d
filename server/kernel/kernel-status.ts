/**
 * A kernel's status as everyone sees it: the union, told to each listener on
 * every change, with the trouble of its host's link shown beside
 * idle/busy/interrupting while that link does not answer. Separate from
 * KernelSession so what viewers are told of a kernel is decided in one place.
 */
import type { KernelLinkTrouble, KernelStatus } from "../core/protocol/notebook-model";
import type { KernelProcess } from "./kernel-process";

export class KernelStatusBoard {
  private current: KernelStatus = { state: "not-started" };
  private readonly listeners = new Set<(status: KernelStatus) => void>();
  /** The link to the kernel's host while it does not answer. */
  private linkTrouble: KernelLinkTrouble | null = null;
  private stopWatching: (() => void) | null = null;

  get status(): KernelStatus {
    return this.current;
  }

  onChange(listener: (status: KernelStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  set(status: KernelStatus): void {
    const { linkTrouble } = this;
    if (linkTrouble && (status.state === "idle" || status.state === "busy" || status.state === "interrupting")) status = { ...status, link: linkTrouble };
    this.current = status;
    for (const listener of this.listeners) listener(status);
  }

  /** Follows the link of a new kernel process (a host agent's) from now; `isCurrent` ignores a late report of an old one. */
  watchLink(process: Pick<KernelProcess, "onLinkTrouble">, isCurrent: () => boolean): void {
    this.stopWatching?.();
    this.linkTrouble = null;
    this.stopWatching =
      process.onLinkTrouble?.((trouble) => {
        if (!isCurrent()) return;
        this.linkTrouble = trouble;
        const status = this.current;
        if (status.state === "idle" || status.state === "busy" || status.state === "interrupting") this.set({ state: status.state, info: status.info });
      }) ?? null;
  }
}
