/**
 * A notebook runtime's shared context without the runtime (for unit tests
 * of its parts): events go through a real coalescer and the one reducer,
 * and every storage call is written down in order.
 */
import { applyServerEvent, newCell } from "../../server/core/notebook/notebook-state";
import type { Cell, CellKind, CellTemplate, KernelInfo, KernelStatus, NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { EventCoalescer, type TailSource } from "../../server/notebook/event-coalescer";
import { NO_PERSISTENCE, type NotebookPersistence } from "../../server/notebook/persistence-contract";
import type { KernelView, RuntimeContext } from "../../server/notebook/runtime-context";
import type { KernelLauncher } from "../../server/kernel/kernel-process";

export const TEST_INFO: KernelInfo = { pid: 1, hostname: "h", python: "3.11", executable: "/usr/bin/python3", torch: "1.13", deviceMode: "2× cpu (no CUDA)" };

export function cell(id: string, source = "", options: { kind?: CellKind; template?: CellTemplate } = {}): Cell {
  return { ...newCell(id, options.kind ?? "code", source), template: options.template ?? null };
}

export function template(id: string, parameters: CellTemplate["parameters"], detached = false): CellTemplate {
  return { id, parameters, detached, fields: [], question: null };
}

/** A host whose kernels are only ever taken over or described here (the parts never start one). */
export function testLauncher(id: string): KernelLauncher {
  return {
    id,
    label: id,
    describe: () => `test host ${id}`,
    start: async () => {
      throw new Error("these tests start no kernel");
    },
  };
}

/** A kernel as the parts read it: idle with `TEST_INFO` unless told otherwise. */
export function kernelView(status: KernelStatus = { state: "idle", info: TEST_INFO }): KernelView {
  return { status, placement: null, host: null };
}

export interface PartsHarness {
  ctx: RuntimeContext;
  /** Every event numbered, in order (after the coalescer). */
  published: NotebookEvent[];
  /** Storage calls in order: the method name and its arguments. */
  stored: Array<{ call: string; args: unknown[] }>;
  /** The tail source the coalescer reads (set it to the part that records outputs). */
  tails: { source: TailSource | null };
}

export function partsHarness(cells: Cell[], persistence: Partial<NotebookPersistence> = {}): PartsHarness {
  let doc: NotebookDocument = { id: "nb", title: "nb", deleted: false, cells, kernel: { state: "not-started" }, predictions: {}, kernelSpec: { hostId: "local", gpus: 0 } };
  const published: NotebookEvent[] = [];
  const stored: PartsHarness["stored"] = [];
  const tails: PartsHarness["tails"] = { source: null };
  const events = new EventCoalescer(
    (event) => {
      published.push(event);
      doc = applyServerEvent(doc, event);
    },
    { tailOf: (cellId) => tails.source?.tailOf(cellId) ?? null, liveMetricsOf: (cellId) => tails.source?.liveMetricsOf(cellId) ?? null },
    { appendIntervalMs: 1, tailIntervalMs: 1, pointsIntervalMs: 1 },
  );
  const logged: NotebookPersistence = { ...NO_PERSISTENCE, ...persistence };
  const writes = new Proxy(logged, {
    get(target, name) {
      const method: unknown = Reflect.get(target, name);
      if (typeof method !== "function") return method;
      return (...args: unknown[]) => {
        stored.push({ call: String(name), args });
        return Reflect.apply(method, target, args);
      };
    },
  });
  return {
    ctx: {
      get doc() {
        return doc;
      },
      events,
      persistence: writes,
    },
    published,
    stored,
    tails,
  };
}
