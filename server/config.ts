/** Server settings from the environment and argv, checked once at start. */
import { z } from "zod";

const configSchema = z.object({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.coerce.number().int().min(0).max(65535).default(3000),
  dev: z.boolean().default(false),
  python: z.string().optional(),
  dataDir: z.string().optional(),
  /** A busy cell silent this long gets a hang report with every process's stack. */
  hangSeconds: z.coerce.number().positive().max(86_400).default(120),
});

export type ServerConfig = z.infer<typeof configSchema>;

export function readConfig(argv = process.argv.slice(2), env = process.env): ServerConfig {
  const parsed = configSchema.safeParse({
    host: env.HOST || undefined,
    port: env.PORT || undefined,
    dev: argv.includes("--dev"),
    python: env.MGPULAB_PYTHON || undefined,
    dataDir: env.MGPULAB_DATA_DIR || undefined,
    hangSeconds: env.MGPULAB_HANG_SECONDS || undefined,
  });
  if (!parsed.success) {
    throw new Error(`bad server settings: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`);
  }
  return parsed.data;
}
