/**
 * Streaming decoder for the kernel's tty byte stream: splits it into protocol
 * frames (carrying this kernel's nonce) and raw console bytes. Chunks may end
 * anywhere — inside the prefix, the nonce, the JSON or a UTF-8 sequence. A
 * frame with another nonce is never matched, so it stays plain text.
 */
import { FRAME_END, FRAME_PREFIX, NONCE_HEX_LENGTH } from "../core/protocol/kernel-messages";

export type DecodedPiece =
  | { kind: "raw"; bytes: Buffer }
  | { kind: "frame"; json: unknown }
  | { kind: "bad-frame"; reason: string };

const END_BYTE = FRAME_END.charCodeAt(0);
const EMPTY = Buffer.alloc(0);
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;

export class FrameDecoder {
  private readonly header: Buffer;
  private carry: Buffer = EMPTY;
  private inFrame = false;
  private skippingOversizedFrame = false;
  private bodyParts: Buffer[] = [];
  private bodyBytes = 0;

  constructor(nonce: string, private readonly maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {
    if (!new RegExp(`^[0-9a-f]{${NONCE_HEX_LENGTH}}$`).test(nonce)) {
      throw new Error(`nonce must be ${NONCE_HEX_LENGTH} lowercase hex characters`);
    }
    this.header = Buffer.from(`${FRAME_PREFIX}${nonce};`, "latin1");
  }

  push(chunk: Buffer): DecodedPiece[] {
    const pieces: DecodedPiece[] = [];
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = EMPTY;
    let pos = 0;
    while (pos < data.length) {
      pos = this.inFrame ? this.readBody(data, pos, pieces) : this.readText(data, pos, pieces);
    }
    return pieces;
  }

  /** End of stream: held-back bytes were text after all; an unfinished frame is reported. */
  end(): DecodedPiece[] {
    const pieces: DecodedPiece[] = [];
    if (this.carry.length > 0) pieces.push({ kind: "raw", bytes: this.carry });
    if (this.inFrame) pieces.push({ kind: "bad-frame", reason: "stream ended inside a frame" });
    this.carry = EMPTY;
    this.resetFrame();
    return pieces;
  }

  private readText(data: Buffer, pos: number, pieces: DecodedPiece[]): number {
    const start = data.indexOf(this.header, pos);
    if (start !== -1) {
      if (start > pos) pieces.push({ kind: "raw", bytes: data.subarray(pos, start) });
      this.inFrame = true;
      return start + this.header.length;
    }
    const held = this.partialHeaderAtEnd(data, pos);
    const textEnd = data.length - held;
    if (textEnd > pos) pieces.push({ kind: "raw", bytes: data.subarray(pos, textEnd) });
    if (held > 0) this.carry = Buffer.from(data.subarray(textEnd));
    return data.length;
  }

  private readBody(data: Buffer, pos: number, pieces: DecodedPiece[]): number {
    const end = data.indexOf(END_BYTE, pos);
    const stop = end === -1 ? data.length : end;
    if (!this.skippingOversizedFrame) {
      this.bodyBytes += stop - pos;
      if (this.bodyBytes > this.maxFrameBytes) {
        this.skippingOversizedFrame = true;
        this.bodyParts = [];
        pieces.push({ kind: "bad-frame", reason: `frame larger than ${this.maxFrameBytes} bytes dropped` });
      } else {
        // Copy: the caller may reuse its chunk buffer.
        this.bodyParts.push(Buffer.from(data.subarray(pos, stop)));
      }
    }
    if (end === -1) return data.length;
    if (!this.skippingOversizedFrame) pieces.push(this.parseBody());
    this.resetFrame();
    return end + 1;
  }

  private parseBody(): DecodedPiece {
    const text = Buffer.concat(this.bodyParts).toString("latin1");
    try {
      return { kind: "frame", json: JSON.parse(text) as unknown };
    } catch (error) {
      return { kind: "bad-frame", reason: `frame is not JSON: ${(error as Error).message}` };
    }
  }

  private resetFrame(): void {
    this.inFrame = false;
    this.skippingOversizedFrame = false;
    this.bodyParts = [];
    this.bodyBytes = 0;
  }

  /** Length of the longest suffix of data[pos..] that could begin a header. */
  private partialHeaderAtEnd(data: Buffer, pos: number): number {
    const windowStart = Math.max(pos, data.length - (this.header.length - 1));
    for (let i = data.indexOf(this.header[0]!, windowStart); i !== -1; i = data.indexOf(this.header[0]!, i + 1)) {
      const tail = data.subarray(i);
      if (tail.equals(this.header.subarray(0, tail.length))) return tail.length;
    }
    return 0;
  }
}
