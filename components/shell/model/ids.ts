/**
 * Random ids for cells and notebooks, valid on the wire (letters, digits, _
 * and -, at most 64 characters). Uses `crypto.getRandomValues`, which, unlike
 * `crypto.randomUUID`, also exists on pages served over plain http.
 */
const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

export function randomId(prefix: string, length = 12): string {
  const bytes = new Uint8Array(length);
  globalThis.crypto.getRandomValues(bytes);
  let id = prefix;
  for (const b of bytes) id += ALPHABET[b % ALPHABET.length];
  return id;
}

export const newCellId = (): string => randomId("c-");
export const newNotebookId = (): string => randomId("nb-", 10);
