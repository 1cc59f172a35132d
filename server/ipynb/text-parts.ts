/**
 * An output text as the file holds it: nbformat's list of lines, not joined.
 * A 50 MB log joined would be a second copy of it; the output budget keeps
 * only its head and tail, so the importer feeds the parts and joins only what
 * it keeps.
 */
export class TextParts {
  private constructor(
    readonly parts: readonly string[],
    /** Characters (UTF-16 code units) of the joined text. */
    readonly length: number,
  ) {}

  static of(parts: readonly string[]): TextParts {
    let length = 0;
    for (const part of parts) length += part.length;
    return new TextParts(parts, length);
  }

  /** The joined text (the one string itself when there is one part: no copy). */
  text(): string {
    return this.parts.length === 1 ? this.parts[0]! : this.parts.join("");
  }
}
