/**
 * What a workshop means for one of its notebooks where that notebook is
 * driven: a led workshop's unrevealed steps are refused, and an ended
 * workshop's kernels driven here shut down. Separate from Workshops (the
 * facilitator's and participants' side) so the notebook driver needs only
 * this, and can exist before Workshops does (lab.ts builds Workshops over
 * the drivers).
 */
import { CommandError } from "../errors";
import { hiddenCells } from "../core/notebook/workshop-steps";
import type { WorkshopRepository } from "../persistence/workshop-repository";

export const WORKSHOP_ENDED_REASON = "the workshop ended: its kernels were shut down and its GPU slots freed";

/** What the notebook driver (cluster/notebook-drivers.ts) asks of workshops. */
export interface WorkshopNotebookRules {
  /** Refuses (forbidden) a participant's run of a step their facilitator has not revealed yet. */
  checkRevealed(notebookId: string, cells: Parameters<typeof hiddenCells>[0], cellIds: readonly string[]): Promise<void>;
  /** Shuts down the kernels of the workshop's copies that this server drives. */
  endLocalKernels(workshopId: string): Promise<void>;
}

/** The notebooks this server drives (the notebook hub): whether one is open here, and shutting its kernel down. */
export interface DrivenNotebooks {
  get(notebookId: string): Promise<object | undefined>;
  kernels: { shutdown(notebookId: string, reason: string): Promise<unknown> };
}

export class WorkshopNotebooks implements WorkshopNotebookRules {
  constructor(
    private readonly stored: Pick<WorkshopRepository, "paceOf" | "notebookIds">,
    private readonly hub: DrivenNotebooks,
  ) {}

  async checkRevealed(notebookId: string, cells: Parameters<typeof hiddenCells>[0], cellIds: readonly string[]): Promise<void> {
    // One prepared statement: this runs on every execute of every participant.
    const workshop = await this.stored.paceOf(notebookId);
    if (!workshop || workshop.pace !== "led") return;
    const hidden = hiddenCells(cells, workshop.revealedSteps);
    if (cellIds.some((id) => hidden.has(id))) throw new CommandError("forbidden", "your facilitator has not revealed this step yet");
  }

  async endLocalKernels(workshopId: string): Promise<void> {
    for (const notebookId of await this.stored.notebookIds(workshopId)) {
      if (await this.hub.get(notebookId)) await this.hub.kernels.shutdown(notebookId, WORKSHOP_ENDED_REASON);
    }
  }
}
