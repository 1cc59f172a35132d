"use client";
/**
 * A page's controller for as long as its view is shown: made once, started
 * when the view mounts and stopped when it goes, its state read as a store
 * (useSyncExternalStore). Written once here for every page that keeps its
 * behaviour in a controller (users, kernels, hosts, workshops, the console…).
 */
import { useEffect, useState, useSyncExternalStore } from "react";

/** What such a controller offers; `subscribe` and `getState` are handed to React unbound, so they are bound fields. */
export interface StartedController<S> {
  readonly subscribe: (listener: () => void) => () => void;
  readonly getState: () => S;
  start(): void;
  stop(): void;
}

/** The controller `create` makes on the first render, and its state now. */
export function useStartedController<S, C extends StartedController<S>>(create: () => C & StartedController<S>): [C, S] {
  const [controller] = useState(create);
  const state = useSyncExternalStore(controller.subscribe, controller.getState, controller.getState);

  useEffect(() => {
    controller.start();
    return () => controller.stop();
  }, [controller]);

  return [controller, state];
}
