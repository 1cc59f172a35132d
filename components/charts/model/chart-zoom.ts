/** Drag-to-zoom on the x axis as a reducer: a drag selects [from, to]; releasing zooms; reset shows everything. */
import type { XWindow } from "../../../server/core/charts/downsample";

export interface ZoomState {
  window: XWindow | null;
  drag: { from: number; to: number } | null;
}

export type ZoomAction = { type: "start"; x: number } | { type: "move"; x: number } | { type: "end" } | { type: "cancel" } | { type: "reset" };

export const NO_ZOOM: ZoomState = { window: null, drag: null };

export function zoomReducer(state: ZoomState, action: ZoomAction): ZoomState {
  switch (action.type) {
    case "start":
      return { ...state, drag: { from: action.x, to: action.x } };
    case "move":
      return state.drag ? { ...state, drag: { ...state.drag, to: action.x } } : state;
    case "end": {
      if (!state.drag) return state;
      const x0 = Math.min(state.drag.from, state.drag.to);
      const x1 = Math.max(state.drag.from, state.drag.to);
      // A click (or the clicks of a double-click) is not a selection.
      return x1 > x0 ? { window: { x0, x1 }, drag: null } : { ...state, drag: null };
    }
    case "cancel":
      return state.drag ? { ...state, drag: null } : state;
    case "reset":
      return NO_ZOOM;
  }
}
