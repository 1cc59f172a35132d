/**
 * What an imported .ipynb may hold. Checked before and while parsing, so a
 * hostile file costs bounded time and memory and is refused with a reason.
 */
import { MAX_SOURCE_CHARS } from "../protocol/socket-api";
import { MAX_CELLS } from "../notebook/notebook-ops";

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
  maxTitleChars: 200,
};
