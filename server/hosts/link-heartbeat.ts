/**
 * The lab's own check that a host agent's link still answers, not left to
 * TCP or ssh keepalives: silent for PING_AFTER_MS, the agent is asked for
 * its health (an answer is the heartbeat); silent for STALL_AFTER_MS the
 * link is "stalled" (the notebooks of its kernels say so); silent for
 * FAIL_AFTER_MS it has failed, and is closed to be opened again. Separate
 * from HostAgent: one timer and three thresholds, told through callbacks.
 */
import type { LinkedState } from "./host-link-state";

/** A link silent this long is asked for the agent's health (an answer is the heartbeat). */
export const PING_AFTER_MS = 4_000;
/**
 * Silent this long (a ping unanswered for 4 s; the agent answers in milliseconds): stalled,
 * said at the next tick, so about 10 s after the last word — 15 s is what the README
 * promises, with room for a slow machine (measured 8.8–10.2 s here under load).
 */
export const STALL_AFTER_MS = 8_000;
/** Silent this long: the link has failed; it is closed and opened again (well within the 45 s the README promises). */
export const FAIL_AFTER_MS = 30_000;
const HEARTBEAT_TICK_MS = 2_000;

export interface HeartbeatTarget {
  /** The link's state while it is open and the agent has said hello; null otherwise (nothing to check). */
  linked(): LinkedState | null;
  /** Asks the agent for its health: any answer is word from the link. */
  ping(): Promise<unknown>;
  /** Nothing came since `silentSince` (epoch ms) for `silentMs`: the link is stalled. */
  stalled(silentSince: number, silentMs: number): void;
  /** The link has failed for `reason`: close it (its end reconnects). */
  failed(reason: string): void;
}

export class LinkHeartbeat {
  private lastHeard = 0;
  private timer: NodeJS.Timeout | null = null;
  private pinging = false;
  /** Why the link was failed, until its end is seen (takeFailure). */
  private failing: string | null = null;

  constructor(private readonly target: HeartbeatTarget) {}

  /** When the open link last delivered anything (epoch ms). */
  get heardAt(): number {
    return this.lastHeard;
  }

  /** Something came from the open link. */
  heard(now = Date.now()): void {
    this.lastHeard = now;
  }

  /** A new link is open: it counts as heard now, and is checked from now. */
  start(now = Date.now()): void {
    this.lastHeard = now;
    this.failing = null;
    if (this.timer) return;
    this.timer = setInterval(() => this.beat(), HEARTBEAT_TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Why the link was failed on purpose (null: it was not), once: the link's end reads it. */
  takeFailure(): string | null {
    const failing = this.failing;
    this.failing = null;
    return failing;
  }

  /** Pings a silent link, marks it stalled, and fails it past FAIL_AFTER_MS. */
  beat(now = Date.now()): void {
    const state = this.target.linked();
    if (!state || this.failing !== null) return;
    const silentMs = now - this.lastHeard;
    if (silentMs >= FAIL_AFTER_MS) {
      this.failing = `the link to the host agent stopped answering (nothing for ${Math.round(silentMs / 1000)} s)`;
      this.target.failed(this.failing);
      return;
    }
    if (silentMs >= STALL_AFTER_MS && state.state === "connected") this.target.stalled(this.lastHeard, silentMs);
    if (silentMs >= PING_AFTER_MS && !this.pinging) {
      this.pinging = true;
      this.target
        .ping()
        .catch(() => undefined) // the answer is what counts; its absence is what the next beats see
        .finally(() => {
          this.pinging = false;
        });
    }
  }
}
