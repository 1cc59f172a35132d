/**
 * A real foreign page, served on another port of this machine and opened in
 * Debian's chromium, tries what a malicious site would: open the lab's
 * socket (WebSocket and polling) and create and run a notebook, POST a
 * notebook file to the import route as a form would, and frame the lab.
 * None of it may work, and nothing may be created.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { launchBrowser } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { connectClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 90_000 };
const SOCKET_IO_CLIENT = readFileSync(path.resolve(__dirname, "../../node_modules/socket.io-client/dist/socket.io.min.js"), "utf8");

/** The attacker's page: every attempt records what happened in window.results. */
function attackerPage(labUrl: string): string {
  return `<!doctype html><html><body>
<iframe id="framed" src="${labUrl}/"></iframe>
<script src="/socket.io.min.js"></script>
<script>
window.results = {};
const file = JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [{ cell_type: "code", source: "open('/tmp/pwned','w')", metadata: {}, outputs: [], execution_count: null }] });
function trySocket(transport) {
  return new Promise((resolve) => {
    const socket = io(${JSON.stringify(labUrl)}, { transports: [transport], reconnection: false, timeout: 8000 });
    socket.on("connect", () => {
      socket.timeout(5000).emit("lab:command", { op: "create-notebook", title: "pwned " + transport }, (err, ack) => {
        resolve(err ? "connected, no answer" : "created: " + JSON.stringify(ack));
      });
    });
    socket.on("connect_error", (error) => resolve("refused: " + error.message));
  });
}
async function tryImport() {
  try {
    // What a cross-site <form enctype="text/plain"> sends; no-cors, so the page cannot read the answer.
    await fetch(${JSON.stringify(labUrl)} + "/api/notebooks/import", { method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" }, body: file });
    return "sent";
  } catch (error) { return "failed: " + error.message; }
}
(async () => {
  window.results.websocket = await trySocket("websocket");
  window.results.polling = await trySocket("polling");
  window.results.importPost = await tryImport();
  window.results.done = true;
})();
</script></body></html>`;
}

describe("a foreign page in the browser", () => {
  let lab: LabServer;
  let attacker: Server;
  let attackerUrl: string;
  let browser: Browser;

  before(async () => {
    lab = await LabServer.start();
    attacker = createServer((req, res) => {
      if (req.url === "/socket.io.min.js") {
        res.writeHead(200, { "Content-Type": "text/javascript" });
        res.end(SOCKET_IO_CLIENT);
        return;
      }
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(attackerPage(lab.url));
    });
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    // "localhost" vs the lab's "127.0.0.1": another origin on the same machine, as in the report.
    attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    attacker?.close();
    await lab?.stop();
  });

  it("cannot open the lab's socket, import a notebook, or frame the lab", LIMIT, async () => {
    const client = await connectClient(lab.url);
    const before = await client.sendLab({ op: "list-notebooks" });
    assert.ok(before.ok && before.notebooks);

    const page = await browser.newPage();
    await page.goto(attackerUrl);
    await page.waitForFunction(() => (window as unknown as { results: { done?: boolean } }).results.done === true, undefined, { timeout: 60_000 });
    const results = await page.evaluate(() => (window as unknown as { results: Record<string, string> }).results);
    assert.match(results.websocket!, /^refused/, `websocket: ${results.websocket}`);
    assert.match(results.polling!, /^refused/, `polling: ${results.polling}`);

    // The framed lab never rendered: chromium replaced the refused frame with its error page.
    const framed = page.frames().find((frame) => frame !== page.mainFrame());
    assert.ok(framed, "the iframe exists");
    assert.equal(await framed.locator("main.home").count().catch(() => 0), 0, "the lab's page did not render inside a foreign frame");

    const afterwards = await client.sendLab({ op: "list-notebooks" });
    client.close();
    assert.ok(afterwards.ok && afterwards.notebooks);
    assert.deepEqual(afterwards.notebooks.map((notebook) => notebook.id), before.notebooks.map((notebook) => notebook.id), "no notebook was created");
    assert.ok(lab.logs.some((line) => line.includes("request refused") && line.includes("/api/notebooks/import")), "the import POST was refused by the server");
    await page.close();
  });
});
