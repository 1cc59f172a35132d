/**
 * Benchmark of a parameter-form change end to end: the socket command, the
 * catalog re-rendering every attached cell of the scenario, the database
 * write, and the acknowledgement — what a participant waits for between
 * typing a value and seeing the code change. Also the bare render in the
 * warm catalog process, and its cold start. Prints a Markdown table; asserts
 * nothing.
 *
 *   npx tsx tests/bench/forms.ts [--changes 100]
 */
import { cpus } from "node:os";
import { ScenarioService } from "../../server/scenarios/scenario-service";
import { chooseInterpreter } from "../../server/kernel/python-interpreter";
import { SocketHarness } from "../helpers/socket-harness";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `${quantile(sorted, 0.5).toFixed(1)} ms | ${quantile(sorted, 0.95).toFixed(1)} ms | ${sorted[sorted.length - 1]!.toFixed(1)} ms`;
}

async function main(): Promise<void> {
  const changes = option("changes", 100);

  const service = new ScenarioService(chooseInterpreter().executable);
  let started = performance.now();
  await service.request("list", {});
  const coldStart = performance.now() - started;
  const renders: number[] = [];
  for (let i = 0; i < changes; i++) {
    started = performance.now();
    await service.request("render", { templateId: "dp-basics/scaling", params: { batch_size: 8 + (i % 500) } });
    renders.push(performance.now() - started);
  }
  service.stop();

  const harness = await SocketHarness.start();
  const client = await harness.client();
  const created = await client.sendLab({ op: "create-from-scenario", scenarioId: "dp-basics" });
  if (!created.ok || !created.notebook) throw new Error(created.ok ? "no notebook" : created.error);
  const opened = await client.send({ op: "open", notebookId: created.notebook.id });
  if (!opened.ok || !opened.notebook) throw new Error(opened.ok ? "no snapshot" : opened.error);
  const cell = opened.notebook.cells.find((c) => c.template?.id === "dp-basics/split")!;
  const attached = opened.notebook.cells.filter((c) => c.template && !c.template.detached).length;
  const formChanges: number[] = [];
  for (let i = 0; i < changes; i++) {
    started = performance.now();
    const ack = await client.send({ op: "set-parameters", notebookId: created.notebook.id, cellId: cell.id, values: { batch_size: 8 + (i % 500) } });
    formChanges.push(performance.now() - started);
    if (!ack.ok) throw new Error(ack.error);
  }
  client.close();
  await harness.close();

  console.log(`\nParameter forms — ${changes} changes, ${cpus().length} cores (${cpus()[0]?.model ?? "?"})\n`);
  console.log("| measure | median | p95 | max |");
  console.log("| --- | ---: | ---: | ---: |");
  console.log(`| catalog process start (imports torch and every scenario) | ${coldStart.toFixed(0)} ms | | |`);
  console.log(`| one template render in the warm catalog process | ${summary(renders)} |`);
  console.log(`| form change → ${attached} attached cells re-rendered, saved, acknowledged | ${summary(formChanges)} |`);
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
