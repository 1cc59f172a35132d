/**
 * The lab's "elided" output has no nbformat equivalent: it travels as a
 * stderr stream with this exact text, which the importer recognises.
 */
const ELIDED_PATTERN = /^\[mgpulab: (\d{1,15}) bytes of output elided\]\n$/;

export function elidedMarker(elidedBytes: number): string {
  return `[mgpulab: ${Math.max(0, Math.floor(elidedBytes))} bytes of output elided]\n`;
}

export function parseElidedMarker(text: string): number | null {
  const match = ELIDED_PATTERN.exec(text);
  return match ? Number(match[1]) : null;
}
