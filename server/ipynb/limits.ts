/**
 * What an imported .ipynb may hold. Checked before and while parsing, so a
 * hostile file costs bounded time and memory and is refused with a reason.
 */
import { MAX_CELLS, MAX_SOURCE_CHARS, MAX_TITLE_CHARS } from "../core/limits";
import { DEFAULT_OUTPUT_BUDGET, type OutputBudget } from "../notebook/output-recorder";

export interface IpynbLimits {
  maxBytes: number;
  maxDepth: number;
  maxCells: number;
  maxSourceChars: number;
  maxOutputsPerCell: number;
  maxOutputChars: number;
  maxTracebackLines: number;
  maxMimeTypes: number;
  maxTitleChars: number;
  /** What of each code cell's outputs is kept: the live budget, plus a bound on rich outputs. */
  outputBudget: OutputBudget;
}

export const IPYNB_LIMITS: Readonly<IpynbLimits> = {
  /** The whole file, in bytes, checked before parsing. */
  maxBytes: 64 * 1024 * 1024,
  /** Nesting of arrays and objects (real notebooks stay under 15). */
  maxDepth: 64,
  maxCells: MAX_CELLS,
  maxSourceChars: MAX_SOURCE_CHARS,
  maxOutputsPerCell: 10_000,
  /** One output text, mime value or traceback line (an image is base64 text). */
  maxOutputChars: 16 * 1024 * 1024,
  maxTracebackLines: 10_000,
  maxMimeTypes: 64,
  maxTitleChars: MAX_TITLE_CHARS,
  outputBudget: {
    // Stream text: exactly what a live run keeps (head + tail, elided count between).
    ...DEFAULT_OUTPUT_BUDGET,
    // One result, display or error: 2 Mi characters is a large plot or a 1.5 MB image as base64, or a
    // few thousand rows of HTML; beyond that a page is slow to draw and no reader looks at it. An output
    // over it keeps its small forms (text/plain, typically) and the rest is elided.
    richOutputChars: 2 * 1024 * 1024,
  },
};
