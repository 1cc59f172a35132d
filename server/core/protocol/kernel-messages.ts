/**
 * The kernel wire protocol: what travels between the server and a Python
 * kernel over the PTY. The Python side is generated from this module
 * (`kernels/mgpulab_wire/protocol_generated.py`: `npm run protocol:generate`)
 * and its frames are written by `kernels/mgpulab_wire/frames.py`; both ends
 * are pinned by `kernels/protocol/fixtures.json`, parsed by both test suites.
 *
 * Output (kernel → server): one frame per message, written with one os.write:
 *   ESC ] m g l ; <32 hex nonce> ; <ASCII-only JSON> BEL
 * Bytes outside frames are the running cell's raw console output.
 *
 * Input (server → kernel): one line per message, base64(JSON) + "\n". Base64
 * has no control characters, so the tty (ISIG kept for Ctrl-C) never sees an
 * INTR/QUIT/EOF byte inside a message (encoded by server/kernel/kernel-channel.ts,
 * since this module is shared with the browser and uses no Node.js API).
 * Interrupt is the single byte 0x03.
 */
import { z } from "zod";
import { MAX_METRIC_STEP, MAX_METRIC_TAG_CHARS, METRIC_NAME_PATTERN } from "../limits";

/** Exported here too: the Python half is generated from this module's exports (scripts/kernel-protocol-source.ts). */
export { MAX_METRIC_STEP, MAX_METRIC_TAG_CHARS, METRIC_NAME_PATTERN };

export const FRAME_PREFIX = "\x1b]mgl;";
export const FRAME_END = "\x07";
export const BOOT_READY_MARKER = "\x1b]mgl-boot;ready\x07";
export const NONCE_HEX_LENGTH = 32;
export const KERNEL_PROTOCOL_VERSION = 1;

export const INTERRUPT_BYTE = "\x03";
/** The most completions one reply carries, and the longest one. */
export const MAX_COMPLETIONS = 500;
export const MAX_COMPLETION_CHARS = 1_000;
/** A module a `preload` request may name: a dotted Python identifier. */
export const PRELOAD_MODULE_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
export const MAX_PRELOAD_MODULES = 16;
/** Ask every process on the kernel's tty for its Python stacks (faulthandler on SIGQUIT). */
export const DUMP_STACKS_BYTE = "\x1c";

const mimeBundle = z.record(z.string(), z.string());

const shortText = z.string().max(1_000);
/** mgpulab.plan.DevicePlan.to_dict(): the kind of run, its devices, and an honest label with the reason. */
export const devicePlanSchema = z.object({
  kind: z.enum(["cuda", "cuda-shared", "cpu-emulated"]),
  engine: z.enum(["single", "DataParallel", "DDP"]),
  count: z.number().int().positive().max(4096),
  placement: z.enum(["auto", "cuda", "cpu"]),
  gpus: z.number().int().nonnegative().max(4096),
  gpusUsed: z.number().int().nonnegative().max(4096),
  backend: z.enum(["gloo", "nccl"]).nullable(),
  hostCores: z.number().int().positive().max(1_000_000),
  devices: z.array(shortText).max(4096),
  names: z.array(shortText).max(4096),
  streams: z.boolean(),
  /** What the run's memory values measure (allocator peaks, tracked tensor bytes, process RSS). */
  memorySource: shortText,
  label: shortText,
  reason: shortText.nullable(),
});
export type DevicePlan = z.infer<typeof devicePlanSchema>;

export const kernelMessageSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("hello"),
    protocol: z.number().int(),
    pid: z.number().int(),
    hostname: z.string(),
    python: z.string(),
    executable: z.string(),
    torch: z.string().nullable(),
    cudaDevices: z.number().int().nonnegative(),
  }),
  z.object({ type: z.literal("status"), id: z.string(), state: z.enum(["busy", "idle"]) }),
  z.object({ type: z.literal("stream"), id: z.string(), name: z.enum(["stdout", "stderr"]), text: z.string() }),
  z.object({ type: z.literal("execute_result"), id: z.string(), count: z.number().int(), data: mimeBundle }),
  z.object({ type: z.literal("display_data"), id: z.string(), data: mimeBundle }),
  z.object({
    type: z.literal("error"),
    id: z.string(),
    ename: z.string(),
    evalue: z.string(),
    traceback: z.array(z.string()),
  }),
  z.object({
    type: z.literal("execute_reply"),
    id: z.string(),
    count: z.number().int(),
    status: z.enum(["ok", "error", "interrupted"]),
    durationMs: z.number().nonnegative(),
  }),
  z.object({ type: z.literal("pong"), id: z.string() }),
  /** A metric point from the experiment toolkit (kernel or a rank process). */
  z.object({
    type: z.literal("metric"),
    runId: z.string().max(MAX_METRIC_TAG_CHARS).optional(),
    rank: z.number().int().nonnegative().max(MAX_METRIC_STEP),
    step: z.number().int().nonnegative().max(MAX_METRIC_STEP),
    /** Non-finite values (a NaN loss) travel as null. */
    values: z.record(z.string().regex(METRIC_NAME_PATTERN), z.number().nullable()),
  }),
  /** Answer to a `stacks` request: every process of the kernel, side by side. */
  z.object({
    type: z.literal("stacks"),
    id: z.string(),
    processes: z.array(z.object({ label: z.string(), pid: z.number().int(), alive: z.boolean(), stack: z.string() })),
  }),
  z.object({ type: z.literal("kernel_log"), level: z.enum(["info", "warning", "error"]), message: z.string() }),
  /**
   * Answer to a `complete` request: what may replace code[cursorStart:cursorEnd]
   * (positions in code points, as in the request). `type` is jedi's kind
   * ("function", "module", "keyword", …), "name" from the plain completer, "magic".
   */
  z.object({
    type: z.literal("complete_reply"),
    id: z.string(),
    matches: z.array(z.object({ text: z.string().max(MAX_COMPLETION_CHARS), type: z.string().max(40) })).max(MAX_COMPLETIONS),
    cursorStart: z.number().int().nonnegative(),
    cursorEnd: z.number().int().nonnegative(),
  }),
  /** Answer to an `inspect` request: signature, type and docstring as text; found false when the cursor names nothing known. */
  z.object({ type: z.literal("inspect_reply"), id: z.string(), found: z.boolean(), text: z.string() }),
  /**
   * The devices a run (its metric tag `runId`) used, as the toolkit's one
   * planning function decided (mgpulab/plan.py): what the charts and stored
   * run say ran, and why.
   */
  z.object({ type: z.literal("device_plan"), runId: z.string().max(MAX_METRIC_TAG_CHARS).optional(), plan: devicePlanSchema }),
]);

export type KernelMessage = z.infer<typeof kernelMessageSchema>;
export type KernelMessageType = KernelMessage["type"];
export type KernelMessageOf<T extends KernelMessageType> = Extract<KernelMessage, { type: T }>;

/** A cell or execution id as the server sends it with a request: letters, digits, _ and -, at most 64. */
const executionRef = z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/);

/** Whether an id can travel in an execute request (a cell id from an old import may not). */
export function isExecutionRef(value: string): boolean {
  return executionRef.safeParse(value).success;
}

export const kernelRequestSchema = z.discriminatedUnion("type", [
  /** `cellId` / `executionId`: which notebook cell and which of its executions this is (the toolkit records them with evidence). */
  z.object({ type: z.literal("execute"), id: z.string(), code: z.string(), cellId: executionRef.optional(), executionId: executionRef.optional() }),
  z.object({ type: z.literal("ping"), id: z.string() }),
  /**
   * Completions at `cursor` (a code-point offset into `code`, the editor's text)
   * from the live namespace. Served by the main loop between cells: while a
   * cell runs it is not answered, and the server does not ask.
   */
  z.object({ type: z.literal("complete"), id: z.string(), code: z.string(), cursor: z.number().int().nonnegative() }),
  /** Signature and docstring of the name at (or the call around) `cursor`; `detail` adds the source. Served like `complete`. */
  z.object({ type: z.literal("inspect"), id: z.string(), code: z.string(), cursor: z.number().int().nonnegative(), detail: z.boolean().optional() }),
  /** Python stacks of the kernel and its registered child processes (answered even while a cell runs). */
  z.object({ type: z.literal("stacks"), id: z.string() }),
  /**
   * Import these modules now, in the background, so the first cell that
   * imports them does not wait (a guided scenario's torch: seconds on a busy
   * host). No execution, no output, no count; a cell importing one meanwhile
   * waits only for the rest of that import. Names are dotted identifiers.
   */
  z.object({ type: z.literal("preload"), modules: z.array(z.string().max(100).regex(PRELOAD_MODULE_PATTERN)).max(MAX_PRELOAD_MODULES) }),
  z.object({ type: z.literal("shutdown") }),
]);
export type KernelRequest = z.infer<typeof kernelRequestSchema>;

/** The first line the bootstrap reads: the nonce and the kernel package's sources. */
export interface BootPayload {
  nonce: string;
  protocol: number;
  modules: Record<string, string>;
  entry: string;
}
