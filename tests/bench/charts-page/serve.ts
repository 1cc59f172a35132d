/**
 * Serves the chart benchmark page (/bench/charts) for the chart benchmark
 * and the chart e2e tests, beside a running lab and never inside it: the
 * lab's `npm start` has no bench route. The page (./main.tsx: the app's own
 * ChartPanel and CellCharts with synthetic data) is bundled here with
 * esbuild; every other path is passed to the lab, so the page's fetches of
 * stored metrics reach the real server on what the browser sees as the
 * page's own origin (the lab's session cookie is host-wide, so the signed-in
 * browser is signed in here too). The page carries the lab's own security
 * headers and Content-Security-Policy, so a chart that the policy would
 * refuse in the lab is refused here as well.
 */
import { randomBytes } from "node:crypto";
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { build } from "esbuild";
import { THEME_BOOT_SCRIPT } from "../../../components/shell/model/theme";
import { contentSecurityPolicy, STATIC_SECURITY_HEADERS } from "../../../server/http/security-headers";

const ROOT = path.resolve(__dirname, "..", "..", "..");
const PAGE = "/bench/charts";

interface Asset {
  type: string;
  body: Uint8Array;
}

/** The page's script and styles, built as the lab's production build would (minified, React in production mode). */
async function bundle(): Promise<Map<string, Asset>> {
  const result = await build({
    entryPoints: [path.join(__dirname, "main.tsx")],
    bundle: true,
    write: false,
    outdir: path.join(ROOT, ".bench-charts"),
    format: "iife",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    minify: true,
    define: { "process.env.NODE_ENV": '"production"' },
    tsconfig: path.join(ROOT, "tsconfig.json"),
    logLevel: "error",
  });
  const assets = new Map<string, Asset>();
  for (const file of result.outputFiles) {
    const name = path.basename(file.path);
    assets.set(`${PAGE}/${name}`, { type: name.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8", body: file.contents });
  }
  return assets;
}

function html(nonce: string, assets: Map<string, Asset>): string {
  const styles = [...assets.keys()].filter((name) => name.endsWith(".css")).map((href) => `<link rel="stylesheet" href="${href}">`);
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8"><title>Chart benchmark</title>',
    `<script nonce="${nonce}">${THEME_BOOT_SCRIPT}</script>`,
    ...styles,
    `</head><body><div id="root"></div><script nonce="${nonce}" src="${PAGE}/main.js"></script></body></html>`,
  ].join("\n");
}

function securityHeaders(res: ServerResponse): string {
  const nonce = randomBytes(18).toString("base64");
  res.setHeader("Content-Security-Policy", contentSecurityPolicy(nonce, { dev: false }));
  for (const [name, value] of Object.entries(STATIC_SECURITY_HEADERS)) res.setHeader(name, value);
  return nonce;
}

/** Passes the request to the lab as it came, but addressed to the lab's host (its host and origin checks know only its own names). */
function passToLab(lab: URL, req: IncomingMessage, res: ServerResponse): void {
  const headers = { ...req.headers, host: lab.host };
  if (headers.origin !== undefined) headers.origin = lab.origin;
  const upstream = request(new URL(req.url ?? "/", lab), { method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.once("error", (error) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end(`the lab did not answer: ${error.message}`);
  });
  req.pipe(upstream);
}

export class ChartsPage {
  private constructor(
    /** Open `${url}/bench/charts?…` in the browser. */
    readonly url: string,
    private readonly server: Server,
  ) {}

  /** Bundles the page and serves it on a free loopback port, in front of the lab at `labUrl`. */
  static async start(labUrl: string): Promise<ChartsPage> {
    const lab = new URL(labUrl);
    const assets = await bundle();
    const server = createServer((req, res) => {
      const pathname = new URL(req.url ?? "/", "http://bench").pathname;
      const asset = assets.get(pathname);
      if (pathname === PAGE || asset) {
        const nonce = securityHeaders(res);
        res.writeHead(200, { "content-type": asset ? asset.type : "text/html; charset=utf-8", "cache-control": "no-store" });
        res.end(asset ? asset.body : html(nonce, assets));
        return;
      }
      passToLab(lab, req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return new ChartsPage(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, server);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
