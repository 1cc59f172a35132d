/**
 * A state object that React reads through `subscribe`/`getState`
 * (useSyncExternalStore), kept apart from what the state means: the notebook
 * controller's pieces all write one store, and only the store decides when
 * listeners hear of it. The user's own actions notify at once; a flood of
 * server events notifies once per scheduled tick (an animation frame).
 */

export type Schedule = (run: () => void) => void;

export class ViewStore<S extends object> {
  private state: S;
  private readonly listeners = new Set<() => void>();
  private notifyScheduled = false;

  constructor(
    initial: S,
    private readonly schedule: Schedule = nextFrame,
  ) {
    this.state = initial;
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getState = (): S => this.state;

  /** Changes the state and tells the listeners now. */
  update(patch: Partial<S>): void {
    this.state = { ...this.state, ...patch };
    this.emit();
  }

  /** Replaces the whole state and tells the listeners now. */
  set(next: S): void {
    this.state = next;
    this.emit();
  }

  /** Changes the state without telling anyone yet (an `emit` or `emitSoon` follows, or the next update carries it). */
  replace(patch: Partial<S>): void {
    this.state = { ...this.state, ...patch };
  }

  emit(): void {
    for (const listener of this.listeners) listener();
  }

  /** Tells the listeners on the next scheduled tick; calls before it come to one notification. */
  emitSoon(): void {
    if (this.notifyScheduled) return;
    this.notifyScheduled = true;
    this.schedule(() => {
      this.notifyScheduled = false;
      this.emit();
    });
  }
}

/** The next animation frame, or 100 ms where frames stop (a background tab); a 16 ms timer outside a browser. */
export function nextFrame(run: () => void): void {
  if (typeof requestAnimationFrame !== "function") {
    setTimeout(run, 16);
    return;
  }
  let done = false;
  const once = (): void => {
    if (done) return;
    done = true;
    run();
  };
  requestAnimationFrame(once);
  setTimeout(once, 100);
}
