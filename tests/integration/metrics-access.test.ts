/**
 * Who may read /metrics, through the real server's HTTP edge: a scraper on
 * this machine always (no session, no token); a request from elsewhere —
 * another machine's address, or anything a proxy forwards — only with the
 * bearer token MGPULAB_METRICS_TOKEN, and without one configured the route
 * is off (404); a page never (a foreign Origin, a cross-site fetch, the
 * lab's own pages too), and a foreign Host is refused before any of it.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { networkInterfaces } from "node:os";
import { after, before, describe, it } from "node:test";
import { LabServer } from "../helpers/lab-server";

const LIMIT = { timeout: 120_000 };
const TOKEN = randomBytes(24).toString("hex");
const ADMIN = { MGPULAB_ADMIN_EMAIL: "ops@example.com", MGPULAB_ADMIN_PASSWORD: "correct horse battery" };

/** This machine's first address that is not loopback (how another machine reaches it); null without one. */
function outsideAddress(): string | null {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) if (address.family === "IPv4" && !address.internal) return address.address;
  }
  return null;
}

/** A GET of /metrics with exactly these headers (fetch would not send a forged Host, and adds its own). */
function scrape(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; authenticate: string | null }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL("/metrics", url), { headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, authenticate: res.headers["www-authenticate"] ?? null }));
    });
    req.once("error", reject);
    req.end();
  });
}

function assertServed(answer: { status: number; body: string }, what: string): void {
  assert.equal(answer.status, 200, `${what}: ${answer.body.slice(0, 200)}`);
  assert.match(answer.body, /^mgpulab_kernels\{/m, what);
}

describe("/metrics on a loopback lab", () => {
  let server: LabServer;
  before(async () => {
    server = await LabServer.start({}, 60_000, { signIn: false });
  });
  after(async () => {
    await server?.stop();
  });

  it("answers a scraper on this machine without a session or a token", LIMIT, async () => {
    assertServed(await scrape(server.url), "loopback");
    assertServed(await scrape(server.url, { "Sec-Fetch-Site": "none" }), "the operator's browser, URL typed in");
  });

  it("is off for what a proxy forwards when no token is configured", LIMIT, async () => {
    for (const header of ["X-Forwarded-For", "X-Real-IP", "Forwarded"]) {
      const answer = await scrape(server.url, { [header]: header === "Forwarded" ? "for=203.0.113.9" : "203.0.113.9" });
      assert.equal(answer.status, 404, `${header}: ${answer.body}`);
      assert.doesNotMatch(answer.body, /mgpulab_/);
    }
  });

  it("refuses pages: a foreign origin, a cross-site fetch, even the lab's own pages; and a foreign Host", LIMIT, async () => {
    const pages: Array<Record<string, string>> = [{ Origin: "http://evil.example" }, { Origin: new URL(server.url).origin }, { "Sec-Fetch-Site": "cross-site" }, { "Sec-Fetch-Site": "same-origin" }];
    for (const headers of pages) {
      const answer = await scrape(server.url, headers);
      assert.equal(answer.status, 403, `${JSON.stringify(headers)}: ${answer.body}`);
      assert.doesNotMatch(answer.body, /mgpulab_/);
    }
    const rebound = await scrape(server.url, { Host: "evil.example" });
    assert.equal(rebound.status, 403, "DNS rebinding: the Host is not the lab's");
  });
});

describe("/metrics on a lab others can reach", () => {
  const address = outsideAddress();

  it("with MGPULAB_METRICS_TOKEN: another machine needs the bearer token; this machine does not", { ...LIMIT, skip: address === null ? "this machine has no address besides loopback" : false }, async () => {
    const server = await LabServer.start({ HOST: "0.0.0.0", MGPULAB_METRICS_TOKEN: TOKEN, ...ADMIN }, 60_000, { signIn: false });
    try {
      const port = new URL(server.url).port;
      const outside = `http://${address}:${port}`;
      const none = await scrape(outside);
      assert.equal(none.status, 401, none.body);
      assert.match(none.authenticate ?? "", /^Bearer /);
      assert.doesNotMatch(none.body, /mgpulab_/);
      const wrong = await scrape(outside, { Authorization: `Bearer ${TOKEN.slice(0, -1)}x` });
      assert.equal(wrong.status, 401, wrong.body);
      assert.equal((await scrape(outside, { Authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` })).status, 401, "only a bearer token");
      assertServed(await scrape(outside, { Authorization: `Bearer ${TOKEN}` }), "with the token");
      assertServed(await scrape(`http://127.0.0.1:${port}`), "this machine, no token");
      assert.equal((await scrape(outside, { Authorization: `Bearer ${TOKEN}`, Origin: "http://evil.example" })).status, 403, "a page, even with the token");
    } finally {
      await server.stop();
    }
  });

  it("without a token: off for another machine, on for this one", { ...LIMIT, skip: address === null ? "this machine has no address besides loopback" : false }, async () => {
    const server = await LabServer.start({ HOST: "0.0.0.0", ...ADMIN }, 60_000, { signIn: false });
    try {
      const port = new URL(server.url).port;
      const outside = await scrape(`http://${address}:${port}`, { Authorization: `Bearer ${TOKEN}` });
      assert.equal(outside.status, 404, outside.body);
      assert.doesNotMatch(outside.body, /mgpulab_/);
      assertServed(await scrape(`http://localhost:${port}`), "this machine");
    } finally {
      await server.stop();
    }
  });
});
