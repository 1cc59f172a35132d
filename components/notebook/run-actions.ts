/** What an output may ask of the notebook (the hang report's buttons): given by the cell, through its output area, to each output. */
export interface RunActions {
  interrupt(): void;
  restart(): void;
}
