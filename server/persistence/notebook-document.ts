/**
 * A stored notebook as the runtime's document, and the bounds a kernel spec
 * is stored within. Separate from NotebookRepository: pure, shared by the
 * catalog that loads documents and the repository that stores specs.
 */
import type { NotebookDocument } from "../core/protocol/notebook-model";
import { InvalidDataError } from "./errors";
import type { StoredKernelSpec, StoredNotebook, StoredPrediction } from "./types";

/** Bounds the database holds a kernel spec to (the socket API checks the same, and the host's own GPU count). */
export function checkKernelSpec(spec: StoredKernelSpec): StoredKernelSpec {
  if (spec.hostId !== null && !/^[A-Za-z0-9_-]{1,64}$/.test(spec.hostId)) throw new InvalidDataError(`"${spec.hostId.slice(0, 80)}" is not a host id`);
  if (!Number.isInteger(spec.gpus) || spec.gpus < 0 || spec.gpus > 1024) throw new InvalidDataError(`a kernel asks for 0 to 1024 GPUs, not ${spec.gpus}`);
  return spec;
}

/**
 * The document the runtime and the socket API work on; the kernel is not
 * started. A spec that names no host gets `defaultHost`, the lab's default.
 */
export function toNotebookDocument(notebook: StoredNotebook, predictions: readonly StoredPrediction[] = [], defaultHost = "local"): NotebookDocument {
  return {
    id: notebook.id,
    title: notebook.title,
    deleted: notebook.deletedAt !== null,
    cells: notebook.cells,
    kernel: { state: "not-started" },
    kernelSpec: { hostId: notebook.kernelSpec.hostId ?? defaultHost, gpus: notebook.kernelSpec.gpus },
    predictions: Object.fromEntries(
      predictions.map((p) => [p.questionId, { questionId: p.questionId, choice: p.choice, afterRun: p.afterRun, committedAt: p.committedAt.toISOString() }]),
    ),
  };
}
