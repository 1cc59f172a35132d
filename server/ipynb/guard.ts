/**
 * The checks before a .ipynb reaches JSON.parse and zod: size in bytes, valid
 * UTF-8, nesting depth (one pass over the text, strings skipped), then JSON.
 */
import { IpynbError } from "./ipynb-error";
import { IPYNB_LIMITS, type IpynbLimits } from "./limits";
import { firstInvalidUtf8 } from "./unicode";
import { errorMessage } from "../core/errors";

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Parses the file's JSON within the limits; throws IpynbError saying what is wrong. */
export function parseNotebookJson(input: string | Uint8Array, limits: IpynbLimits = IPYNB_LIMITS): unknown {
  const bytes = typeof input === "string" ? Buffer.byteLength(input, "utf8") : input.byteLength;
  if (bytes > limits.maxBytes) {
    throw new IpynbError("", `the file is ${formatBytes(bytes)}; at most ${formatBytes(limits.maxBytes)} can be imported`);
  }
  if (bytes === 0) throw new IpynbError("", "the file is empty");
  let text: string;
  if (typeof input === "string") {
    text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  } else {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(input);
    } catch {
      throw new IpynbError("", `the file is not UTF-8 text (an invalid byte sequence at byte ${firstInvalidUtf8(input)})`);
    }
  }
  checkDepth(text, limits.maxDepth);
  try {
    return JSON.parse(text);
  } catch (error) {
    const detail = errorMessage(error);
    throw new IpynbError("", `the file is not valid JSON (${detail.slice(0, 200)})`);
  }
}

function checkDepth(text: string, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > maxDepth) throw new IpynbError("", `arrays and objects are nested more than ${maxDepth} deep (at character ${i})`);
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${bytes} bytes`;
}
