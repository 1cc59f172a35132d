/** Server settings from the environment and argv, checked once at start. */
import { z } from "zod";
import type { KernelLimits } from "./notebook/kernel-registry";
import { SETTLE_MS } from "./notebook/durability-gate";
import { kernelCapacity, measureMachine, type MachineFacts } from "./kernel-capacity";

const originSchema = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin === value.replace(/\/$/, "").toLowerCase();
  } catch {
    return false;
  }
}, "an origin is scheme://host[:port], like https://lab.example.com");

/** "10/60": at most 10 per 60 seconds. */
const rateLimitSchema = z
  .string()
  .regex(/^\d{1,6}\/\d{1,6}$/, "a rate limit is max/seconds, like 10/60")
  .transform((value) => {
    const [max, windowSeconds] = value.split("/").map(Number) as [number, number];
    return { max, windowSeconds };
  })
  .pipe(z.object({ max: z.number().int().min(1), windowSeconds: z.number().int().min(1) }))
  .or(z.object({ max: z.number(), windowSeconds: z.number() }));

const configSchema = z.object({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.coerce.number().int().min(0).max(65535).default(3000),
  dev: z.boolean().default(false),
  python: z.string().optional(),
  dataDir: z.string().optional(),
  /** A busy cell silent this long gets a hang report with every process's stack. */
  hangSeconds: z.coerce.number().positive().max(86_400).default(120),
  /**
   * How long (ms) a run's progress ("queued", "running", outputs) may wait to be stored and shown with its end: a quick
   * cell then costs one commit and one packet per viewer, not three (notebook/durability-gate.ts). 0: at once.
   */
  settleMs: z.coerce.number().min(0).max(1000).default(SETTLE_MS),
  /**
   * Public origins of a lab behind a proxy (`https://lab.example.com`), besides
   * the names of HOST:PORT itself. Only pages from the lab's origins may drive it.
   */
  allowedOrigins: z.array(originSchema).default([]),
  /**
   * At most this many kernels run at once; one more is refused with a message, none is ended to make room.
   * Unset: sized from the machine at start (kernel-capacity.ts).
   */
  maxKernels: z.coerce.number().int().min(1).max(1000).optional(),
  /** A kernel with nothing running or queued and nobody viewing its notebook this long is shut down; 0: never. */
  kernelIdleMinutes: z.coerce.number().min(0).max(7 * 24 * 60).default(60),
  /** The notebook is warned this long before idle shutdown ends its kernel. */
  kernelIdleWarningMinutes: z.coerce.number().min(0).max(24 * 60).default(5),
  /** GPU utilisation (percent) above which a kernel counts as in use for idle shutdown. */
  gpuBusyPercent: z.coerce.number().min(0).max(100).default(5),
  /** How long the local host's agent keeps kernels with no lab server connected (a restart takes them over within it). */
  kernelLeaseSeconds: z.coerce.number().int().min(1).max(7 * 24 * 3600).optional(),
  /** Where the local host's agent keeps its socket and code (default: $XDG_RUNTIME_DIR or the temp dir). */
  agentRuntimeDir: z.string().optional(),
  /** How long a session lasts unless used (it is renewed as it is used). */
  sessionHours: z.coerce.number().positive().max(90 * 24).default(7 * 24),
  /** Sign-in attempts (password or token URL) per client address: "max/seconds". */
  loginRateLimit: rateLimitSchema.default({ max: 10, windowSeconds: 60 }),
  /** Workshop joins per client address: a room behind one NAT is one address, so this is generous. */
  joinRateLimit: rateLimitSchema.default({ max: 120, windowSeconds: 60 }),
  /**
   * Several lab servers on one database: the Redis they reach each other
   * through (redis://[:password@]host:port). Unset: this server is the only one.
   */
  redisUrl: z.string().regex(/^rediss?:\/\//, "a Redis URL starts with redis:// or rediss://").optional(),
  /** With several servers: how long a server's claim on a notebook lasts unless renewed; a dead server's kernels move after it. */
  driverLeaseSeconds: z.coerce.number().min(1).max(600).default(15),
  /**
   * The bearer token a Prometheus elsewhere scrapes /metrics with; unset,
   * /metrics answers scrapers on this machine only (auth/authorize.ts).
   */
  metricsToken: z.string().min(16, "MGPULAB_METRICS_TOKEN must be at least 16 characters (e.g. openssl rand -hex 32)").regex(/^\S+$/, "MGPULAB_METRICS_TOKEN must not contain spaces").optional(),
  /** The first admin, made on a start where none exists (MGPULAB_ADMIN_EMAIL / _PASSWORD / _NAME). */
  firstAdmin: z.object({ email: z.string(), password: z.string(), name: z.string() }).optional(),
});

export type ServerConfig = z.infer<typeof configSchema>;

export function readConfig(argv = process.argv.slice(2), env: Readonly<Record<string, string | undefined>> = process.env): ServerConfig {
  const parsed = configSchema.safeParse({
    host: env.HOST || undefined,
    port: env.PORT || undefined,
    dev: argv.includes("--dev"),
    python: env.MGPULAB_PYTHON || undefined,
    dataDir: env.MGPULAB_DATA_DIR || undefined,
    hangSeconds: env.MGPULAB_HANG_SECONDS || undefined,
    settleMs: env.MGPULAB_SETTLE_MS || undefined,
    allowedOrigins: env.MGPULAB_ALLOWED_ORIGINS ? env.MGPULAB_ALLOWED_ORIGINS.split(",").map((origin) => origin.trim()).filter(Boolean) : undefined,
    maxKernels: env.MGPULAB_MAX_KERNELS || undefined,
    kernelIdleMinutes: env.MGPULAB_KERNEL_IDLE_MINUTES || undefined,
    kernelLeaseSeconds: env.MGPULAB_KERNEL_LEASE_SECONDS || undefined,
    kernelIdleWarningMinutes: env.MGPULAB_KERNEL_IDLE_WARNING_MINUTES || undefined,
    gpuBusyPercent: env.MGPULAB_GPU_BUSY_PERCENT || undefined,
    agentRuntimeDir: env.MGPULAB_AGENT_RUNTIME_DIR || undefined,
    sessionHours: env.MGPULAB_SESSION_HOURS || undefined,
    loginRateLimit: env.MGPULAB_LOGIN_RATE_LIMIT || undefined,
    joinRateLimit: env.MGPULAB_JOIN_RATE_LIMIT || undefined,
    redisUrl: env.MGPULAB_REDIS_URL || undefined,
    driverLeaseSeconds: env.MGPULAB_DRIVER_LEASE_SECONDS || undefined,
    metricsToken: env.MGPULAB_METRICS_TOKEN || undefined,
    firstAdmin:
      env.MGPULAB_ADMIN_EMAIL || env.MGPULAB_ADMIN_PASSWORD
        ? { email: env.MGPULAB_ADMIN_EMAIL ?? "", password: env.MGPULAB_ADMIN_PASSWORD ?? "", name: env.MGPULAB_ADMIN_NAME || "Admin" }
        : undefined,
  });
  if (!parsed.success) {
    throw new Error(`bad server settings: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`);
  }
  return parsed.data;
}

/**
 * A hosts file's idle settings, for those not set in the environment (the
 * environment wins: an operator's override for one start).
 */
export function withIdleFromHostsFile(
  config: ServerConfig,
  idle: { minutes: number; gpuUtilizationPercent: number; warnMinutes: number },
  env: Readonly<Record<string, string | undefined>> = process.env,
): ServerConfig {
  return {
    ...config,
    kernelIdleMinutes: env.MGPULAB_KERNEL_IDLE_MINUTES ? config.kernelIdleMinutes : idle.minutes,
    gpuBusyPercent: env.MGPULAB_GPU_BUSY_PERCENT ? config.gpuBusyPercent : idle.gpuUtilizationPercent,
    kernelIdleWarningMinutes: env.MGPULAB_KERNEL_IDLE_WARNING_MINUTES ? config.kernelIdleWarningMinutes : idle.warnMinutes,
  };
}

/**
 * The kernel registry's limits from the settings (idle shutdown off at 0 minutes); the kernel cap is
 * MGPULAB_MAX_KERNELS or, unset, what `machine` holds (measured now unless given).
 */
export function kernelLimitsOf(
  config: Pick<ServerConfig, "maxKernels" | "kernelIdleMinutes"> & Partial<Pick<ServerConfig, "kernelIdleWarningMinutes" | "gpuBusyPercent">>,
  machine: MachineFacts = measureMachine(),
): KernelLimits {
  const capacity = kernelCapacity(machine, config.maxKernels);
  return {
    maxKernels: capacity.max,
    capacity,
    idleShutdownMs: config.kernelIdleMinutes > 0 ? config.kernelIdleMinutes * 60_000 : null,
    idleWarningMs: (config.kernelIdleWarningMinutes ?? 5) * 60_000,
    gpuBusyPercent: config.gpuBusyPercent ?? 5,
  };
}

/** A bind address only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, "");
  return name === "localhost" || name === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
