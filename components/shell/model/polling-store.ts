/**
 * A page's list kept fresh from the server: loaded on start, after every
 * reconnect, on `refresh()` and every `pollMs` while started, never two
 * loads at once (a tick while one is out is skipped; a refresh asked then
 * runs once after it). An answer to a load asked before a fresher word (an
 * action's own answer, see `supersede`) is dropped, so a slow list never
 * brings back what was just changed. A failed load keeps what was shown and
 * says why. Written once here: the hosts, kernels, users, workshops and
 * shares pages each only say what to fetch and what an answer changes.
 */
import type { Refusal } from "../../../server/core/protocol/op-table";
import { ViewStore, type Schedule } from "./view-store";

/** What every polled page's state carries next to its own fields. */
export interface LoadState {
  /** "error": the first load failed (nothing to show); after one success a failure keeps "ready" and what was shown. */
  status: "loading" | "ready" | "error";
  /** The last failure in words ("Loading the hosts failed: …"), until dismissed or the next good load. */
  error: string | null;
}

export interface PollingOptions<S, R extends { ok: true }> {
  /** How a failed load is named in its message ("Loading the hosts" failed: …). */
  what: string;
  /** The message of a failed load in other words than "<what> failed: <why>". */
  failed?: (error: string) => string;
  fetch(): Promise<R | Refusal>;
  /** What a good answer changes (a load's failure message is cleared unless this says otherwise). */
  apply(reply: R, state: S): Partial<S>;
  /** How often to load again while started (ms); without it: on start, reconnect and `refresh()` only. */
  pollMs?: number;
  schedule?: Schedule;
}

/** Where a started store hears of reconnects (a lab transport). */
export interface ReconnectSource {
  onConnect(listener: () => void): void;
}

export class PollingStore<S extends LoadState, R extends { ok: true }> extends ViewStore<S> {
  private timer: ReturnType<typeof setInterval> | null = null;
  private inFlight: Promise<void> | null = null;
  private followUp: Promise<void> | null = null;
  /** Bumped by each load and by `supersede`: an answer is applied only if nothing newer was asked or heard since. */
  private seq = 0;

  constructor(
    initial: S,
    private readonly options: PollingOptions<S, R>,
  ) {
    super(initial, options.schedule);
  }

  /** Loads now, after every reconnect, and every `pollMs`. */
  start(reconnects: ReconnectSource): void {
    reconnects.onConnect(() => void this.refresh());
    void this.refresh();
    const pollMs = this.options.pollMs;
    if (pollMs !== undefined && this.timer === null) this.timer = setInterval(() => void this.tick(), pollMs);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    // Answers still on their way are for a page that is gone.
    this.seq += 1;
  }

  /** Loads now, or, while a load is out, once more right after it (its answer may predate what the caller knows). */
  refresh(): Promise<void> {
    if (this.inFlight === null) return this.load();
    this.followUp ??= this.inFlight.then(() => {
      this.followUp = null;
      return this.load();
    });
    return this.followUp;
  }

  /** An answer newer than any load asked before now arrived (an action's): those loads' answers are dropped. */
  supersede(): void {
    this.seq += 1;
  }

  /** Says what failed and why; what was shown stays. */
  fail(what: string, refusal: Refusal): void {
    this.showFailure(`${what} failed: ${refusal.error}`);
  }

  dismissError(): void {
    const state = this.getState();
    if (state.error !== null) this.set({ ...state, error: null });
  }

  private showFailure(message: string): void {
    const state = this.getState();
    this.set({ ...state, status: state.status === "ready" ? "ready" : "error", error: message });
  }

  private tick(): Promise<void> {
    return this.inFlight ?? this.load();
  }

  private load(): Promise<void> {
    const seq = ++this.seq;
    const run = this.options.fetch().then((answer) => {
      if (seq !== this.seq) return;
      if (!answer.ok) return this.showFailure(this.options.failed?.(answer.error) ?? `${this.options.what} failed: ${answer.error}`);
      const state = this.getState();
      this.set({ ...state, status: "ready", error: state.status === "error" ? null : state.error, ...this.options.apply(answer, state) });
    });
    const settled = run.finally(() => {
      if (this.inFlight === settled) this.inFlight = null;
    });
    this.inFlight = settled;
    return settled;
  }
}

/** Where a page's list comes from: reconnects to load again on, and a connection to close with the page. */
export interface PageLink extends ReconnectSource {
  close(): void;
}

/**
 * A page over one polling store (hosts, kernels, users, workshops…): what
 * React reads, start and stop, refresh and dismissing the error, written
 * once; the page adds its own actions over `store`.
 */
export class PolledPage<S extends LoadState, R extends { ok: true }> {
  protected readonly store: PollingStore<S, R>;
  readonly subscribe: PollingStore<S, R>["subscribe"];
  readonly getState: PollingStore<S, R>["getState"];

  constructor(
    private readonly link: PageLink | null,
    initial: S,
    options: PollingOptions<S, R>,
  ) {
    this.store = new PollingStore(initial, options);
    this.subscribe = this.store.subscribe;
    this.getState = this.store.getState;
  }

  start(): void {
    if (this.link !== null) this.store.start(this.link);
  }

  stop(): void {
    this.store.stop();
    this.link?.close();
  }

  refresh(): Promise<void> {
    return this.store.refresh();
  }

  dismissError(): void {
    this.store.dismissError();
  }

  protected get state(): S {
    return this.store.getState();
  }

  protected update(patch: Partial<S>): void {
    this.store.update(patch);
  }
}
