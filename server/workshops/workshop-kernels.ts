/**
 * The participants' kernels of a workshop: each admitted participant's first
 * copy gets its kernel started ahead of the start time (once per copy on
 * this server), and each copy's kernel state is told in the roster's words.
 * Separate from Workshops: this is the part that drives kernels, not
 * workshop rows.
 */
import type { ParticipantKernelState } from "../core/protocol/workshop-model";
import type { WorkshopRepository, WorkshopRow } from "../persistence/workshop-repository";
import { DrivenElsewhere } from "../cluster/driven-elsewhere";
import type { NotebookHub } from "../notebook/notebook-hub";
import { errorMessage } from "../core/errors";
import type { Log } from "../logger";

export class WorkshopKernels {
  /** Copies whose kernel this server has asked to start ahead of time. */
  private readonly prestarted = new Set<string>();

  constructor(
    private readonly stored: Pick<WorkshopRepository, "neverRunCopies">,
    private readonly hub: Pick<NotebookHub, "get" | "open">,
    /** A kernel started ahead: the workshop's console shows it. */
    private readonly started: (workshopId: string) => void,
    private readonly log: Log,
  ) {}

  /** Starts the kernel of each admitted participant's first copy that never had one. */
  async prestart(workshop: Pick<WorkshopRow, "id" | "scenarioIds">): Promise<void> {
    const firstScenario = workshop.scenarioIds[0];
    if (firstScenario === undefined) return;
    const copies = await this.stored.neverRunCopies(workshop.id, firstScenario);
    const first = new Map<string, string>();
    for (const copy of copies) if (copy.hasFirstStep && !first.has(copy.ownerId)) first.set(copy.ownerId, copy.id);
    for (const notebookId of first.values()) {
      if (this.prestarted.has(notebookId)) continue;
      this.prestarted.add(notebookId);
      void this.hub
        .open(notebookId)
        .then((runtime) => runtime.startKernel())
        .then(
          () => this.started(workshop.id),
          (error: unknown) => {
            // With several lab servers, each one's clock tries: the server that drives the notebook starts it.
            if (error instanceof DrivenElsewhere) return;
            this.log("warning", `workshop ${workshop.id}: could not start the kernel of notebook ${notebookId} ahead of time: ${errorMessage(error)}`);
          },
        );
    }
  }

  /** A participant's copy's kernel as the facilitator's roster shows it. */
  async stateOf(notebookId: string): Promise<ParticipantKernelState> {
    const runtime = await this.hub.get(notebookId);
    if (!runtime) return "not-started";
    const status = runtime.kernel.status;
    switch (status.state) {
      case "not-started":
        return "not-started";
      case "starting":
      case "restarting":
        return "starting";
      case "idle":
        return "idle";
      case "busy":
      case "interrupting":
        return runtime.doc.cells.some((cell) => cell.runState === "running" && cell.outputs.some((output) => output.kind === "hang")) ? "hung" : "busy";
      case "dead":
        return "dead";
      case "refused":
        // No GPU free for it now: it waits for a retry, as a participant in the admission queue waits.
        return "waiting";
      case "shutdown":
        return "shutdown";
    }
  }
}
