/**
 * A real Prometheus from Debian's `prometheus` package, on loopback, in a
 * temp directory, scraping the targets it is given; queried through its
 * HTTP API as a dashboard or an alert rule would.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { exited, freePort, startDaemon } from "./daemons";
import { ensureDebianPackages } from "./debian-packages";

const PROMETHEUS = "/usr/bin/prometheus";

export interface ScrapeTarget {
  job: string;
  /** host:port */
  target: string;
  scheme?: "http" | "https";
  bearerToken?: string;
}

export interface PromSample {
  metric: Record<string, string>;
  value: number;
}

/** null when Prometheus can run here (installing the Debian package when root may); else why not. */
export function prometheusUnavailable(): string | null {
  if (existsSync(PROMETHEUS)) return null;
  return ensureDebianPackages(["prometheus"]) ?? (existsSync(PROMETHEUS) ? null : `${PROMETHEUS} is missing: install Debian's prometheus`);
}

export class Prometheus {
  private constructor(
    readonly url: string,
    private readonly stopDaemon: () => Promise<void>,
  ) {}

  /** Starts Prometheus scraping `targets` every `intervalSeconds`. */
  static async start(targets: ScrapeTarget[], intervalSeconds = 2): Promise<Prometheus> {
    const unavailable = prometheusUnavailable();
    if (unavailable) throw new Error(unavailable);
    const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-prometheus-"));
    const config = path.join(dir, "prometheus.yml");
    writeFileSync(config, scrapeConfig(targets, intervalSeconds));
    const port = await freePort();
    const argv = [PROMETHEUS, `--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=info"];
    const daemon = await startDaemon(argv, /Server is ready to receive web requests/, { timeoutMs: 60_000 });
    const killOnExit = () => daemon.child.kill("SIGKILL");
    process.once("exit", killOnExit);
    return new Prometheus(`http://127.0.0.1:${port}`, async () => {
      process.removeListener("exit", killOnExit);
      daemon.child.kill("SIGTERM");
      await exited(daemon.child);
      rmSync(dir, { recursive: true, force: true });
    });
  }

  /** An instant query (PromQL) through the HTTP API: the vector it returns. */
  async query(promql: string): Promise<PromSample[]> {
    const response = await fetch(`${this.url}/api/v1/query?${new URLSearchParams({ query: promql })}`);
    const body = (await response.json()) as { status: string; error?: string; data?: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
    if (body.status !== "success" || !body.data) throw new Error(`Prometheus refused ${promql}: ${body.error ?? response.status}`);
    if (body.data.resultType !== "vector") throw new Error(`expected a vector from ${promql}, got ${body.data.resultType}`);
    return body.data.result.map((sample) => ({ metric: sample.metric, value: Number(sample.value[1]) }));
  }

  /** The scrape targets as Prometheus sees them (health, last error). */
  async targets(): Promise<Array<{ job: string; health: string; lastError: string }>> {
    const response = await fetch(`${this.url}/api/v1/targets`);
    const body = (await response.json()) as { data: { activeTargets: Array<{ labels: { job: string }; health: string; lastError: string }> } };
    return body.data.activeTargets.map((target) => ({ job: target.labels.job, health: target.health, lastError: target.lastError }));
  }

  stop(): Promise<void> {
    return this.stopDaemon();
  }
}

function scrapeConfig(targets: ScrapeTarget[], intervalSeconds: number): string {
  const jobs = targets.map((target) =>
    [
      `  - job_name: ${JSON.stringify(target.job)}`,
      `    scheme: ${target.scheme ?? "http"}`,
      ...(target.bearerToken ? [`    authorization:`, `      credentials: ${JSON.stringify(target.bearerToken)}`] : []),
      ...(target.scheme === "https" ? [`    tls_config:`, `      insecure_skip_verify: true`] : []),
      `    static_configs:`,
      `      - targets: [${JSON.stringify(target.target)}]`,
    ].join("\n"),
  );
  return [`global:`, `  scrape_interval: ${intervalSeconds}s`, `  scrape_timeout: ${intervalSeconds}s`, `scrape_configs:`, ...jobs, ""].join("\n");
}
