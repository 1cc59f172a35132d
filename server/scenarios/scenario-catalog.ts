/**
 * The scenario catalog lives in Python (kernels/mgpulab_scenarios); the
 * server asks it, through its CLI, for the list and for a scenario rendered
 * as notebook cells. Parameter values are validated by the catalog itself
 * (types, ranges, literal rendering) before any cell exists.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { z } from "zod";
import { KERNELS_DIR } from "../kernel/kernel-bundle";
import { chooseInterpreter } from "../kernel/python-interpreter";
import type { ScenarioSummary } from "../protocol/notebook-model";
import { CommandError } from "../notebook/notebook-ops";

const summarySchema = z.array(z.object({ id: z.string(), title: z.string(), source: z.string(), summary: z.string() }));
const jsonValue: z.ZodType<unknown> = z.lazy(() => z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValue), z.record(z.string(), jsonValue)]));
const cellsSchema = z.array(
  z.object({
    kind: z.enum(["code", "markdown"]),
    source: z.string(),
    template: z.object({ id: z.string(), parameters: z.record(z.string(), jsonValue) }).nullable(),
  }),
);
export type ScenarioCells = z.infer<typeof cellsSchema>;

const CLI_TIMEOUT_MS = 60_000;

export class ScenarioCatalog {
  private summaries: Promise<ScenarioSummary[]> | null = null;

  constructor(private readonly python = chooseInterpreter().executable) {}

  list(): Promise<ScenarioSummary[]> {
    this.summaries ??= this.cli(["list", "--json"]).then((out) => summarySchema.parse(JSON.parse(out)));
    this.summaries.catch(() => {
      this.summaries = null;
    });
    return this.summaries;
  }

  async notebookCells(scenarioId: string, params: Record<string, string | number | boolean>): Promise<ScenarioCells> {
    const args = [scenarioId, "--notebook"];
    for (const [name, value] of Object.entries(params)) args.push("--param", `${name}=${String(value)}`);
    return cellsSchema.parse(JSON.parse(await this.cli(args)));
  }

  private cli(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        this.python,
        ["-m", "mgpulab_scenarios.cli", ...args],
        {
          cwd: path.resolve(KERNELS_DIR),
          env: { ...process.env, PYTHONPATH: KERNELS_DIR, PYTHONDONTWRITEBYTECODE: "1" },
          timeout: CLI_TIMEOUT_MS,
          maxBuffer: 16 * 1024 * 1024,
        },
        (error, stdout, stderr) => {
          if (!error) return resolve(stdout);
          // Exit 2 is the catalog refusing the input (unknown id, bad parameter): the user's to fix.
          const message = stderr.trim().split("\n").pop()?.replace(/^error: /, "") || error.message;
          reject(error.code === 2 ? new CommandError(message) : new Error(`scenario catalog failed: ${message}`));
        },
      );
    });
  }
}
