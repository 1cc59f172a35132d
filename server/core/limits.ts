/**
 * The lab's size limits, each defined once: the browser checks them before
 * sending, the socket edge and the kernel channel validate with them, the
 * repositories refuse stored data past them, and the kernel protocol's
 * Python half is generated with the metric limits (kernel-messages.ts
 * re-exports them for that).
 */

/** Cells in one notebook. */
export const MAX_CELLS = 10_000;
/** Characters in one cell's source. */
export const MAX_SOURCE_CHARS = 1_000_000;
/** Characters in a notebook, cell or execution id. */
export const MAX_ID_CHARS = 64;
/** Characters in a notebook's title. */
export const MAX_TITLE_CHARS = 200;
/**
 * The largest socket message either end sends, in bytes. A source travels in
 * one command as JSON, where a character may take 6 bytes (a control
 * character escaped as \u0001), so the cap is sized for the longest allowed
 * source at its worst plus room for the command around it: any valid command
 * fits, and the client checks before sending (messageTooLarge) so that a
 * larger one gets an error instead of the server closing the connection.
 */
export const MAX_MESSAGE_BYTES = 6 * MAX_SOURCE_CHARS + 2 * 1024 * 1024;

/** Metric limits, as the toolkit's metrics.NAME_PATTERN; checked at the channel so one bad frame never spoils a stored batch. */
export const METRIC_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_.:/-]{0,63}$/;
export const MAX_METRIC_TAG_CHARS = 64;
export const MAX_METRIC_STEP = 2 ** 31 - 1;
