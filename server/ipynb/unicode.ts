/**
 * Text the lab imports must be valid Unicode. JSON can spell a lone UTF-16
 * surrogate ("\ud800"), but UTF-8 cannot encode one: SQLite, the kernel's
 * PTY and Python would each turn it into replacement characters, and Jupyter
 * itself cannot save such a notebook (its UTF-8 write fails). So a file with
 * one is refused, naming the field and the character, rather than changed.
 */
import { formatPath, IpynbError } from "./ipynb-error";
import { TextParts } from "./text-parts";

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (code units: no `u` flag). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Offset of the first lone surrogate in the parts joined, or -1. A pair split
 * across two parts is whole once joined, so it is not lone.
 */
function loneSurrogateAt(parts: readonly string[]): number {
  let offset = 0;
  let pairedStart = false; // this part's first character completes the previous part's last
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!;
    const next = parts[p + 1];
    LONE_SURROGATE.lastIndex = 0;
    let pairsIntoNext = false;
    for (let match = LONE_SURROGATE.exec(part); match !== null; match = LONE_SURROGATE.exec(part)) {
      const at = match.index;
      if (at === 0 && pairedStart && isLow(part.charCodeAt(0))) continue;
      if (at === part.length - 1 && isHigh(part.charCodeAt(at)) && next !== undefined && isLow(next.charCodeAt(0))) {
        pairsIntoNext = true;
        continue;
      }
      return offset + at;
    }
    pairedStart = pairsIntoNext;
    offset += part.length;
  }
  return -1;
}

function refuse(path: ReadonlyArray<PropertyKey>, parts: readonly string[], at: number): never {
  let offset = at;
  let code = 0;
  for (const part of parts) {
    if (offset < part.length) {
      code = part.charCodeAt(offset);
      break;
    }
    offset -= part.length;
  }
  const escaped = `\\u${code.toString(16).padStart(4, "0")}`;
  throw new IpynbError(
    formatPath(path),
    `contains a lone UTF-16 surrogate (${escaped}) at character ${at}: not valid Unicode, which UTF-8 cannot encode, so neither the lab nor Jupyter could keep it`,
  );
}

/** A key named in an error message: its surrogates spelled as escapes, so the message itself is valid text. */
function escapeSurrogates(text: string): string {
  return text.replace(/[\ud800-\udfff]/g, (char) => `\\u${char.charCodeAt(0).toString(16)}`);
}

/** Throws IpynbError at the first string (or key) holding a lone surrogate, anywhere in `value`. */
export function assertValidUnicode(value: unknown, path: PropertyKey[] = []): void {
  if (typeof value === "string") {
    const at = loneSurrogateAt([value]);
    if (at !== -1) refuse(path, [value], at);
  } else if (value instanceof TextParts) {
    const at = loneSurrogateAt(value.parts);
    if (at !== -1) refuse(path, value.parts, at);
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) assertValidUnicode(value[i], [...path, i]);
  } else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const at = loneSurrogateAt([key]);
      if (at !== -1) refuse([...path, escapeSurrogates(key)], [key], at);
      assertValidUnicode(item, [...path, key]);
    }
  }
}

/** Byte offset of the first byte that is not part of a valid UTF-8 sequence, or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    let need: number;
    let min: number;
    if (b < 0x80) {
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else {
      return i;
    }
    let code = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      code = (code << 6) | (c & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates (ED A0..BF ..) and values past U+10FFFF are not UTF-8.
    if (code < min || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return i;
    i += need + 1;
  }
  return -1;
}
