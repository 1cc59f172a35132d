/**
 * Text that came through a terminal (what ssh, srun or a bootstrap printed on
 * a PTY), made fit for a message: escape sequences removed, "\r\n" and a
 * lone "\r" read as line ends, and no other control character left. A PTY
 * turns every "\n" into "\r\n" (and ssh adds its own), so without this a
 * reason reads "Permission denied\r\r" in the UI and the log.
 */

/** Multi-line text: line ends kept as "\n", tabs kept. */
export function plainText(text: string): string {
  return (
    text
      // OSC (title, the lab's own frames) up to BEL or ST; CSI (colours, cursor); other two-byte escapes.
      .replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?/g, "")
      .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, "")
      .replace(/\x1b[@-Z\\-_]?/g, "")
      .replace(/\r+\n/g, "\n")
      .replace(/\r/g, "\n")
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "")
  );
}

/** One line: every line end becomes " | " between the non-empty lines. */
export function plainLine(text: string): string {
  return plainText(text)
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .join(" | ");
}
