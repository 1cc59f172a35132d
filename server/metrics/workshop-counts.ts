/**
 * Workshops as the operator counts them, read from the database at a
 * scrape: the same on every lab server of one database (a dashboard takes
 * max() across servers, not sum()).
 */
import type { WorkshopRepository } from "../persistence/workshop-repository";

export interface WorkshopCounts {
  /** Started (or with no start time) and not ended. */
  active: number;
  /** Participants of workshops not ended, in (admitted) or in the admission queue (waiting). */
  admitted: number;
  waiting: number;
}

export function workshopCounts(workshops: Pick<WorkshopRepository, "counts">, now = new Date()): Promise<WorkshopCounts> {
  return workshops.counts(now);
}
