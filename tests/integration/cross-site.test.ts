/**
 * Nothing but the lab's own pages may drive it: real foreign-origin clients
 * against the real server process (socket.io over WebSocket and polling,
 * forged Host for DNS rebinding, cross-site form-like POSTs), and the
 * security headers on every kind of response.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { io as connect } from "socket.io-client";
import { LabServer } from "../helpers/lab-server";
import { connectClient } from "../helpers/socket-harness";
import { labFetch, sessionCookie, signIn } from "../helpers/lab-session";

const LIMIT = { timeout: 60_000 };
const NOTEBOOK_FILE = JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [{ cell_type: "code", source: "print(1)", metadata: {}, outputs: [], execution_count: null }] });

/** Tries a socket.io handshake with these headers; resolves "connected" or the refusal. */
/** A handshake carrying the lab's session (a signed-in user's browser): only the origin decides. */
function tryHandshake(url: string, transport: "websocket" | "polling", headers: Record<string, string>): Promise<string> {
  const socket = connect(url, { transports: [transport], forceNew: true, reconnection: false, extraHeaders: { cookie: sessionCookie(url) ?? "", ...headers }, timeout: 10_000 });
  return new Promise((resolve) => {
    socket.once("connect", () => {
      socket.disconnect();
      resolve("connected");
    });
    socket.once("connect_error", (error: Error & { context?: { statusCode?: number } }) => {
      socket.disconnect();
      resolve(`refused: ${error.message}`);
    });
  });
}

/** A GET with exactly these headers (fetch will not send a forged Host). */
function rawGet(url: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("only the lab's own pages drive it", () => {
  let server: LabServer;
  let port: string;

  before(async () => {
    server = await LabServer.start();
    port = new URL(server.url).port;
  });

  after(async () => {
    await server?.stop();
  });

  async function notebookCount(): Promise<number> {
    const lab = await connectClient(server.url);
    const listed = await lab.sendLab({ op: "list-notebooks" });
    lab.close();
    assert.ok(listed.ok && listed.notebooks);
    return listed.notebooks.length;
  }

  it("refuses a socket.io handshake from a foreign origin, over WebSocket and polling", LIMIT, async () => {
    for (const transport of ["websocket", "polling"] as const) {
      for (const origin of ["http://evil.example", `http://localhost:${Number(port) + 1}`, "null"]) {
        const outcome = await tryHandshake(server.url, transport, { Origin: origin });
        assert.match(outcome, /^refused/, `${transport} from ${origin}: ${outcome}`);
      }
    }
  });

  it("refuses a handshake whose Host is not one of the lab's names (DNS rebinding), even with a matching Origin", LIMIT, async () => {
    for (const transport of ["websocket", "polling"] as const) {
      const outcome = await tryHandshake(server.url, transport, { Host: `evil.example:${port}`, Origin: `http://evil.example:${port}` });
      assert.match(outcome, /^refused/, `${transport}: ${outcome}`);
    }
  });

  it("accepts the lab's own origins under each loopback name, and programs that send no Origin", LIMIT, async () => {
    for (const name of ["localhost", "127.0.0.1", "[::1]"]) {
      const outcome = await tryHandshake(server.url, "websocket", { Host: `${name}:${port}`, Origin: `http://${name}:${port}` });
      assert.equal(outcome, "connected", name);
    }
    assert.equal(await tryHandshake(server.url, "websocket", {}), "connected");
    // WebSocket only (several servers behind a balancer need no sticky sessions): long-polling is refused even from the lab's own origin.
    assert.match(await tryHandshake(server.url, "polling", { Origin: `http://127.0.0.1:${port}` }), /^refused/);
  });

  it("refuses a forged set-kernel-spec from a foreign page: the notebook's kernel stays where it was", LIMIT, async () => {
    const own = await connectClient(server.url);
    const created = await own.sendLab({ op: "create-notebook", title: "kernel spec target" });
    assert.ok(created.ok && created.notebook);
    const notebookId = created.notebook.id;
    for (const transport of ["websocket", "polling"] as const) {
      // A page elsewhere opening a socket to the lab and sending the commands it would need.
      const forged = connect(server.url, { transports: [transport], forceNew: true, reconnection: false, extraHeaders: { Origin: "http://evil.example", cookie: sessionCookie(server.url) ?? "" }, timeout: 10_000 });
      forged.emit("notebook:command", { op: "open", notebookId });
      forged.emit("notebook:command", { op: "set-kernel-spec", notebookId, hostId: "local", gpus: 1 });
      const outcome = await new Promise<string>((resolve) => {
        forged.once("connect", () => resolve("connected"));
        forged.once("connect_error", (error: Error) => resolve(`refused: ${error.message}`));
      });
      forged.disconnect();
      assert.match(outcome, /^refused/, `${transport}: ${outcome}`);
    }
    const opened = await own.send({ op: "open", notebookId });
    own.close();
    assert.ok(opened.ok && opened.notebook);
    assert.deepEqual(opened.notebook.kernelSpec, { hostId: "local", gpus: 0 });
  });

  it("refuses a forged workshop command from a foreign page, signed in as its facilitator: the workshop goes on", LIMIT, async () => {
    const admin = await connectClient(server.url);
    const made = await admin.sendLab({ op: "create-user", name: "Fay", email: "fay@example.com", password: "correct horse battery staple", role: "facilitator" });
    admin.close();
    assert.ok(made.ok, made.ok ? "" : made.error);
    const cookie = await signIn(server.url, "fay@example.com", "correct horse battery staple");
    const facilitator = await connectClient(server.url, cookie);
    const created = await facilitator.sendLab({ op: "create-workshop", title: "target", scenarioIds: ["dp-basics"] });
    assert.ok(created.ok && created.workshop);
    const workshopId = created.workshop.id;
    for (const transport of ["websocket", "polling"] as const) {
      const forged = connect(server.url, { transports: [transport], forceNew: true, reconnection: false, extraHeaders: { Origin: "http://evil.example", cookie }, timeout: 10_000 });
      forged.emit("lab:command", { op: "workshop-broadcast", workshopId, message: "from elsewhere" });
      forged.emit("lab:command", { op: "update-workshop", workshopId, end: true });
      const outcome = await new Promise<string>((resolve) => {
        forged.once("connect", () => resolve("connected"));
        forged.once("connect_error", (error: Error) => resolve(`refused: ${error.message}`));
      });
      forged.disconnect();
      assert.match(outcome, /^refused/, `${transport}: ${outcome}`);
    }
    const view = await facilitator.sendLab({ op: "workshop-console", workshopId });
    facilitator.close();
    assert.ok(view.ok && view.console);
    assert.equal(view.console.workshop.endedAt, null);
    assert.deepEqual(view.console.broadcasts, []);
    // Its class summary is not served under a foreign Host either.
    assert.equal((await rawGet(server.url, `/api/workshops/${workshopId}/summary.csv`, { Host: `evil.example:${port}` })).status, 403);
  });

  it("refuses pages and routes asked for under a foreign Host", LIMIT, async () => {
    for (const path of ["/", "/api/executions", "/api/notebooks/abc/export", "/notebooks/abc"]) {
      const response = await rawGet(server.url, path, { Host: `evil.example:${port}` });
      assert.equal(response.status, 403, path);
      assert.match((JSON.parse(response.body) as { error: string }).error, /answers only to localhost, 127\.0\.0\.1, \[::1\]/);
      assert.equal((await rawGet(server.url, path, { Host: `localhost:${port}` })).status === 403, false, `${path} under the lab's name`);
    }
  });

  it("refuses a cross-site form-like POST to the import route and creates nothing", LIMIT, async () => {
    const before = await notebookCount();
    const attempts: Array<[string, Record<string, string>, number]> = [
      ["a foreign page, text/plain", { Origin: "http://localhost:3199", "Content-Type": "text/plain" }, 403],
      ["a foreign page, the right type", { Origin: "http://evil.example", "Content-Type": "application/x-ipynb+json" }, 403],
      ["cross-site without Origin", { "Sec-Fetch-Site": "cross-site", "Content-Type": "application/x-ipynb+json" }, 403],
      ["same-site other port without Origin", { "Sec-Fetch-Site": "same-site", "Content-Type": "application/x-ipynb+json" }, 403],
      ["the lab's origin, but a form's type", { Origin: server.url, "Content-Type": "text/plain;charset=UTF-8" }, 415],
      ["the lab's origin, urlencoded", { Origin: server.url, "Content-Type": "application/x-www-form-urlencoded" }, 415],
    ];
    for (const [what, headers, status] of attempts) {
      const response = await fetch(`${server.url}/api/notebooks/import`, { method: "POST", headers, body: NOTEBOOK_FILE });
      assert.equal(response.status, status, what);
      assert.ok(((await response.json()) as { error?: string }).error, what);
    }
    assert.equal(await notebookCount(), before, "no notebook was created");
    const own = await labFetch(`${server.url}/api/notebooks/import`, {
      method: "POST",
      headers: { Origin: server.url, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/x-ipynb+json" },
      body: NOTEBOOK_FILE,
    });
    assert.equal(own.status, 201, "the lab's own page still imports");
    assert.equal(await notebookCount(), before + 1);
  });

  it("sends the security headers on pages, routes, static files and refusals", LIMIT, async () => {
    const page = await labFetch(`${server.url}/`);
    const html = await page.text();
    const chunk = /src="(\/_next\/static\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(chunk, "the page loads a script chunk");
    const responses = [
      ["page", page],
      ["notebook page", await labFetch(`${server.url}/notebooks/nope`)],
      ["chart route", await labFetch(`${server.url}/api/executions`)],
      ["static chunk", await labFetch(`${server.url}${chunk}`)],
      ["refused import", await fetch(`${server.url}/api/notebooks/import`, { method: "POST", headers: { Origin: server.url, "Content-Type": "text/plain" }, body: "x" })],
    ] as const;
    for (const [what, response] of responses) {
      const csp = response.headers.get("content-security-policy") ?? "";
      {
        assert.match(csp, /script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/, what);
        assert.match(csp, /frame-ancestors 'none'/, what);
        assert.doesNotMatch(csp, /unsafe-eval/, what);
      }
      assert.equal(response.headers.get("x-frame-options"), "DENY", what);
      assert.equal(response.headers.get("x-content-type-options"), "nosniff", what);
      assert.equal(response.headers.get("referrer-policy"), "same-origin", what);
      assert.equal(response.headers.get("cross-origin-resource-policy"), "same-origin", what);
    }
    // Next put this response's nonce on its scripts; the nonce changes per response.
    const nonce = /'nonce-([^']+)'/.exec(page.headers.get("content-security-policy") ?? "")![1]!;
    assert.ok(html.includes(`nonce="${nonce}"`), "the page's scripts carry the response's nonce");
    const again = await labFetch(`${server.url}/`);
    assert.notEqual(/'nonce-([^']+)'/.exec(again.headers.get("content-security-policy") ?? "")?.[1], nonce);
  });
});
