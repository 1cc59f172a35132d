/**
 * The host agent protocol: what travels between a lab server and the host
 * agent (kernels/mgpulab_agent) that owns a host's kernels. The Python half
 * is generated from this module (`kernels/mgpulab_wire/agent_protocol_generated.py`,
 * `npm run protocol:generate`), as for the kernel protocol.
 *
 * The link is a PTY: `ssh -tt host python3 -c <bootstrap>`, `srun … --pty`,
 * or a local process. The bootstrap prints AGENT_BOOT_READY_MARKER, reads one
 * base64(JSON) line (agentBootSchema), starts the agent daemon if none with
 * that id runs on the host (detached: it outlives the link for its lease),
 * then relays bytes between the tty and the daemon's Unix socket.
 *
 * Agent → lab: frames as in kernel-messages.ts (`ESC ] mgl ; <link nonce> ; JSON BEL`),
 * one agentMessageSchema each. Lab → agent: base64(JSON) lines, one
 * agentRequestSchema each. Interrupt, restart and stop are messages, never
 * tty bytes, so they mean the same over ssh, srun and a local PTY.
 *
 * Each kernel's output is a sequence numbered from 1 (kernel_frame,
 * kernel_console, kernel_exit). The agent keeps what the lab has not
 * acknowledged in a bounded buffer; a lab that (re)connects sends `resume`
 * with the last number it stored and gets the rest, in order, once.
 */
import { z } from "zod";

export const AGENT_PROTOCOL_VERSION = 1;
export const AGENT_BOOT_READY_MARKER = "\x1b]mgl-boot;agent\x07";
/** How long an agent outlives its last link before it ends every kernel it started. */
export const DEFAULT_LEASE_SECONDS = 600;
/** Unacknowledged output an agent keeps per kernel; older messages are dropped and reported as a gap. */
export const DEFAULT_AGENT_BUFFER_BYTES = 64 * 1024 * 1024;
/** How long a cell gets to stop after SIGINT before the agent dumps stacks and ends the kernel. */
export const DEFAULT_INTERRUPT_GRACE_MS = 5_000;
/** An agent id names a lab's agent on one host (part of a socket path): short and plain. */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9_-]{1,40}$/;
/** A kernel id as the lab names it to its agent. */
export const AGENT_KERNEL_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** A frame the agent relays may carry a large display (an image): the lab's frame limit. */
export const MAX_AGENT_FRAME_CHARS = 48 * 1024 * 1024;

const agentId = z.string().regex(AGENT_ID_PATTERN);
const kernelId = z.string().regex(AGENT_KERNEL_ID_PATTERN);
const requestId = z.string().min(1).max(64);
const seq = z.number().int().nonnegative();
const shortText = z.string().max(4_000);

/** A GPU (or MIG slice) a host offers: `uuid` is what CUDA_VISIBLE_DEVICES names it by. */
export const hostGpuSchema = z.object({
  index: z.number().int().nonnegative(),
  uuid: z.string().min(1).max(200),
  name: z.string().max(200),
  memoryTotalMiB: z.number().int().nonnegative().nullable(),
});
export type HostGpu = z.infer<typeof hostGpuSchema>;

/** The first line the agent bootstrap reads. */
export const agentBootSchema = z.object({
  nonce: z.string().length(32),
  protocol: z.number().int(),
  agentId,
  /** Hash of `modules`: an agent started from other code says so in its hello. */
  codeHash: z.string().max(128),
  /** Repository-relative path → source of the agent and kernel packages. */
  modules: z.record(z.string(), z.string()),
  leaseSeconds: z.number().int().positive().max(7 * 24 * 3600),
  bufferBytes: z.number().int().positive(),
  /** The GPUs the host declares; null: discover them (NVML, else nvidia-smi, else none). */
  gpus: z.array(hostGpuSchema).max(1024).nullable(),
  /** A kernel asking for more GPUs than are free waits in a queue, or is refused. */
  whenFull: z.enum(["queue", "refuse"]),
  interruptGraceMs: z.number().int().nonnegative().max(600_000),
  /** The interpreter kernels run with on the host; null: the one that runs the agent. */
  python: z.string().max(1_000).nullable(),
  /** Where the agent keeps its socket, code and log; null: $XDG_RUNTIME_DIR or the temp dir. */
  runtimeDir: z.string().max(500).nullable(),
});
export type AgentBoot = z.infer<typeof agentBootSchema>;

/**
 * The settings of the hosts file an agent runs by. A link sends them with its
 * first line (and `configure` sends them again when the file is reloaded): a
 * running agent takes them where it safely can, and says what it kept and why.
 */
export const agentSettingsSchema = agentBootSchema.pick({ leaseSeconds: true, bufferBytes: true, gpus: true, whenFull: true, interruptGraceMs: true, python: true });
export type AgentSettings = z.infer<typeof agentSettingsSchema>;

/** One setting a link (or a reload) asked for: taken (`applied`), or kept as it was, with why. */
export const settingsNoteSchema = z.object({
  setting: z.enum(["leaseSeconds", "bufferBytes", "gpus", "whenFull", "interruptGraceMs", "python"]),
  applied: z.boolean(),
  message: shortText,
});
export type SettingsNote = z.infer<typeof settingsNoteSchema>;

/** A kernel holding GPUs or waiting for them: the lab names its notebook and person. */
export const gpuUseSchema = z.object({
  kernel: kernelId,
  gpus: z.number().int().nonnegative(),
  /** Epoch ms: since when it holds them (its start) or waits (its request); null when unknown. */
  since: z.number().nullable(),
});
export type GpuUse = z.infer<typeof gpuUseSchema>;

/**
 * Why a kernel has no GPUs yet: what it asks, what is free of the host's
 * total, who holds GPUs and who waits before it. The queue is first come,
 * first served: GPUs freed while a kernel waits are reserved for the first in
 * the queue (kernels have no end time, so letting a later one go first could
 * delay the first without bound).
 */
export const gpuWaitSchema = z.object({
  asked: z.number().int().nonnegative(),
  free: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  holders: z.array(gpuUseSchema).max(1024),
  ahead: z.array(gpuUseSchema).max(1024),
});
export type GpuWait = z.infer<typeof gpuWaitSchema>;

export const agentKernelStateSchema = z.enum(["queued", "running", "exited"]);

export const kernelExitSchema = z.object({
  code: z.number().int().nullable(),
  signal: z.number().int().nullable(),
  /** In words: "exited with code 0", "killed by SIGKILL: lease expired". */
  reason: shortText,
});

/** One kernel as the agent holds it. */
export const agentKernelSchema = z.object({
  kernel: kernelId,
  state: agentKernelStateSchema,
  pid: z.number().int().nullable(),
  /** 1-based place in the GPU queue while queued. */
  position: z.number().int().positive().nullable(),
  /** UUIDs leased to it (its CUDA_VISIBLE_DEVICES). */
  gpus: z.array(z.string()).max(1024),
  gpusRequested: z.number().int().nonnegative(),
  /** The oldest sequence number still buffered (lastSeq + 1 when none is). */
  firstSeq: seq,
  lastSeq: seq,
  startedAt: z.number().nullable(),
  /** Highest utilisation (percent) of its GPUs at the last sample; null without NVML. */
  gpuUtilization: z.number().nonnegative().max(100).nullable(),
  exit: kernelExitSchema.nullable(),
  /** While queued: what it waits for. */
  wait: gpuWaitSchema.optional(),
  /** Taken out of the queue because the host now refuses it (its settings changed): why, as a refused start says. */
  refusal: gpuWaitSchema.optional(),
});
export type AgentKernel = z.infer<typeof agentKernelSchema>;

export const agentMessageSchema = z.discriminatedUnion("type", [
  /** Sent on every new link, before anything else. */
  z.object({
    type: z.literal("agent_hello"),
    protocol: z.number().int(),
    agentId,
    codeHash: z.string().max(128),
    pid: z.number().int(),
    hostname: shortText,
    /** Epoch milliseconds. */
    startedAt: z.number(),
    leaseSeconds: z.number().int(),
    kernels: z.array(agentKernelSchema),
    /** The settings it runs by now (absent from agents older than settings adoption). */
    settings: agentSettingsSchema.optional(),
    /** What this link's settings changed, and what the agent kept and why. */
    notes: z.array(settingsNoteSchema).max(64).optional(),
  }),
  /** A kernel was queued, started, or moved in the queue (not sequenced: hello repeats the current state). */
  z.object({ type: z.literal("kernel_state"), kernel: agentKernelSchema, requestId: requestId.nullable() }),
  /** One frame the kernel wrote, as its JSON text (the lab validates it with the kernel protocol). */
  z.object({ type: z.literal("kernel_frame"), kernel: kernelId, seq, json: z.string().max(MAX_AGENT_FRAME_CHARS) }),
  /** Raw tty text outside frames: the running cell's console. */
  z.object({ type: z.literal("kernel_console"), kernel: kernelId, seq, text: z.string() }),
  /** A frame with the wrong nonce or no end: told, never fatal. */
  z.object({ type: z.literal("kernel_bad_frame"), kernel: kernelId, seq, reason: shortText }),
  /** The kernel's last sequenced message. */
  z.object({ type: z.literal("kernel_exit"), kernel: kernelId, seq, exit: kernelExitSchema }),
  /** Messages after `afterSeq` up to `resumedFrom - 1` were dropped from the bounded buffer before the lab asked. */
  z.object({ type: z.literal("kernel_gap"), kernel: kernelId, afterSeq: seq, resumedFrom: seq, droppedMessages: z.number().int().nonnegative(), droppedBytes: z.number().int().nonnegative() }),
  /** Which escalation step ended the interrupt: the cell stopped on SIGINT, or the kernel had to be ended. */
  z.object({
    type: z.literal("interrupt_result"),
    requestId,
    kernel: kernelId,
    step: z.enum(["sigint", "sigterm", "sigkill", "not-running"]),
    elapsedMs: z.number().nonnegative(),
  }),
  z.object({
    type: z.literal("health"),
    requestId,
    hostname: shortText,
    pid: z.number().int(),
    uptimeSeconds: z.number().nonnegative(),
    python: shortText,
    /** null while the agent is still finding out (importing torch takes seconds), or without torch. */
    torch: shortText.nullable(),
    cuda: shortText.nullable(),
    probe: z.enum(["pending", "done", "failed"]),
    gpuSource: z.enum(["nvml", "nvidia-smi", "declared", "none"]),
    gpus: z.array(
      z.object({
        gpu: hostGpuSchema,
        memoryUsedMiB: z.number().int().nonnegative().nullable(),
        utilization: z.number().nonnegative().max(100).nullable(),
        kernel: kernelId.nullable(),
        /** Epoch ms the holder leased it. */
        since: z.number().optional(),
        /** Free, but kept for the first kernel in the queue (it needs more GPUs than are free). */
        reservedFor: kernelId.optional(),
        /** No longer in the hosts file; kept until the kernel holding it ends. */
        retiring: z.boolean().optional(),
      }),
    ),
    kernels: z.number().int().nonnegative(),
    queued: z.number().int().nonnegative(),
    leaseSeconds: z.number().int(),
    links: z.number().int().nonnegative(),
    codeHash: z.string().max(128),
    /** The GPU queue, first come first served. */
    queue: z.array(gpuUseSchema).max(1024).optional(),
    settings: agentSettingsSchema.optional(),
    /** What the agent keeps against its settings now, and why (a GPU gone from the file that a kernel still holds). */
    kept: z.array(shortText).max(64).optional(),
  }),
  /** A request that could not be carried out, with why (refused start: no GPU free and the host refuses). */
  z.object({ type: z.literal("request_failed"), requestId, message: shortText, refusal: gpuWaitSchema.optional() }),
  /** The answer to `configure`: what changed, and what was kept and why. */
  z.object({ type: z.literal("configured"), requestId, settings: agentSettingsSchema, notes: z.array(settingsNoteSchema).max(64) }),
  z.object({ type: z.literal("agent_log"), level: z.enum(["info", "warning", "error"]), message: shortText }),
]);
export type AgentMessage = z.infer<typeof agentMessageSchema>;
export type AgentMessageOf<T extends AgentMessage["type"]> = Extract<AgentMessage, { type: T }>;

export const agentRequestSchema = z.discriminatedUnion("type", [
  /** Start (or queue) a kernel; answered with kernel_state or request_failed. */
  z.object({
    type: z.literal("start_kernel"),
    requestId,
    kernel: kernelId,
    gpus: z.number().int().nonnegative().max(1024),
    cwd: z.string().max(4_000).nullable(),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/), z.string().max(32_000)),
  }),
  /** One line for the kernel's stdin: a kernel request as kernel-channel.ts encodes it (base64 JSON, no newline). */
  z.object({ type: z.literal("kernel_input"), kernel: kernelId, line: z.string().regex(/^[A-Za-z0-9+/=]*$/) }),
  /**
   * Send this kernel's buffered messages after `afterSeq`, then keep streaming it on this link. With a requestId
   * the agent first answers with the kernel's state (or request_failed when it has no such kernel): a link's hello
   * lists only the kernels of its opening, and another lab server may have started one since.
   */
  z.object({ type: z.literal("resume"), kernel: kernelId, afterSeq: seq, requestId: requestId.optional() }),
  /**
   * The kernel's state now, answered with kernel_state (or request_failed when the agent has no such kernel); its
   * stream stays where it goes. A lab server that takes a notebook over asks before it opens the notebook.
   */
  z.object({ type: z.literal("describe_kernel"), requestId, kernel: kernelId }),
  /** The lab has stored everything up to `seq`: the agent may drop it. */
  z.object({ type: z.literal("ack"), kernel: kernelId, seq }),
  /** SIGINT; if the cell is still running after graceMs: stack dump (SIGQUIT), SIGTERM to the group, SIGKILL. */
  z.object({ type: z.literal("interrupt"), requestId, kernel: kernelId, graceMs: z.number().int().nonnegative().max(600_000).nullable() }),
  /** Ctrl-\ for a wedged kernel: every process that registered faulthandler prints its stacks. */
  z.object({ type: z.literal("dump_stacks"), kernel: kernelId }),
  /** End the kernel's whole process tree (a queued kernel leaves the queue); its kernel_exit follows. */
  z.object({ type: z.literal("stop_kernel"), requestId, kernel: kernelId, graceMs: z.number().int().nonnegative().max(600_000) }),
  /** The lab has what it needs of an exited kernel: the agent forgets it. */
  z.object({ type: z.literal("forget"), kernel: kernelId }),
  z.object({ type: z.literal("health"), requestId }),
  /** The hosts file was reloaded: take these settings where safe (answered with `configured`). */
  z.object({ type: z.literal("configure"), requestId, settings: agentSettingsSchema }),
  /** End every kernel and the agent itself (a replaced agent, or the lab's tests). */
  z.object({ type: z.literal("agent_shutdown") }),
]);
export type AgentRequest = z.infer<typeof agentRequestSchema>;
export type AgentRequestOf<T extends AgentRequest["type"]> = Extract<AgentRequest, { type: T }>;
