/** The request guard's decisions, case by case (the real server's behaviour is in tests/integration/cross-site). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readConfig } from "../../server/config";
import { checkHttpRequest, checkSocketHandshake, hostWithoutPort, labNames } from "../../server/http/request-guard";
import { contentSecurityPolicy } from "../../server/http/security-headers";

const loopback = labNames("127.0.0.1", 3000);
const proxied = labNames("127.0.0.1", 3000, ["https://lab.example.com"]);

describe("request guard", () => {
  const hostCases: Array<[string, string | null]> = [
    ["localhost:3000", "localhost"],
    ["127.0.0.1", "127.0.0.1"],
    ["[::1]:3000", "[::1]"],
    ["[::1]", "[::1]"],
    ["[::1]x", null],
    ["evil.example:3000", "evil.example"],
    ["a:b:c", null],
    ["host:99999999", null],
  ];
  for (const [value, expected] of hostCases) {
    it(`reads the host name of ${JSON.stringify(value)} as ${String(expected)}`, () => {
      assert.equal(hostWithoutPort(value), expected);
    });
  }

  const handshakes: Array<[string, Record<string, string>, boolean]> = [
    ["the lab's page", { host: "127.0.0.1:3000", origin: "http://127.0.0.1:3000" }, true],
    ["the lab under localhost", { host: "localhost:3000", origin: "http://localhost:3000" }, true],
    ["a program without Origin", { host: "127.0.0.1:3000" }, true],
    ["another port of this machine", { host: "127.0.0.1:3000", origin: "http://localhost:3199" }, false],
    ["a foreign site", { host: "127.0.0.1:3000", origin: "http://evil.example" }, false],
    ["an opaque origin", { host: "127.0.0.1:3000", origin: "null" }, false],
    ["DNS rebinding", { host: "evil.example:3000", origin: "http://evil.example:3000" }, false],
    ["no Host", { origin: "http://127.0.0.1:3000" }, false],
    ["cross-site without Origin", { host: "127.0.0.1:3000", "sec-fetch-site": "cross-site" }, false],
    ["same-site without Origin", { host: "127.0.0.1:3000", "sec-fetch-site": "same-site" }, false],
  ];
  for (const [what, headers, allowed] of handshakes) {
    it(`${allowed ? "accepts" : "refuses"} a handshake from ${what}`, () => {
      assert.equal(checkSocketHandshake(headers, loopback).ok, allowed);
    });
  }

  it("accepts a proxy's public origin only when it is listed", () => {
    const headers = { host: "lab.example.com", origin: "https://lab.example.com" };
    assert.equal(checkSocketHandshake(headers, loopback).ok, false);
    assert.equal(checkSocketHandshake(headers, proxied).ok, true);
  });

  it("needs a form-proof body type on a state-changing request, and nothing extra on a read", () => {
    const own = { host: "127.0.0.1:3000", origin: "http://127.0.0.1:3000" };
    assert.deepEqual(checkHttpRequest("GET", { host: "127.0.0.1:3000" }, loopback), { ok: true });
    assert.equal(checkHttpRequest("POST", { ...own, "content-type": "application/x-ipynb+json" }, loopback).ok, true);
    assert.equal(checkHttpRequest("POST", { ...own, "content-type": "application/json; charset=utf-8" }, loopback).ok, true);
    for (const type of ["text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", ""]) {
      const verdict = checkHttpRequest("POST", { ...own, "content-type": type }, loopback);
      assert.equal(verdict.ok ? 0 : verdict.status, 415, type);
    }
    const foreign = checkHttpRequest("DELETE", { host: "127.0.0.1:3000", origin: "http://evil.example", "content-type": "application/json" }, loopback);
    assert.equal(foreign.ok ? 0 : foreign.status, 403);
  });

  it("names every interface when bound to all of them", () => {
    const names = labNames("0.0.0.0", 3000);
    for (const name of ["localhost", "127.0.0.1", "[::1]"]) assert.ok(names.hosts.has(name), name);
    assert.ok(!names.hosts.has("evil.example"));
  });

  it("refuses a malformed allowed origin at start, naming the setting", () => {
    assert.throws(() => readConfig([], { MGPULAB_ALLOWED_ORIGINS: "https://lab.example.com/path" }), /allowedOrigins.*scheme:\/\/host/);
    assert.deepEqual(readConfig([], { MGPULAB_ALLOWED_ORIGINS: "https://lab.example.com, http://10.0.0.5:8080" }).allowedOrigins, [
      "https://lab.example.com",
      "http://10.0.0.5:8080",
    ]);
  });

  it("allows eval only in development", () => {
    assert.doesNotMatch(contentSecurityPolicy("abc", { dev: false }), /unsafe-eval/);
    assert.match(contentSecurityPolicy("abc", { dev: true }), /script-src [^;]*'unsafe-eval'/);
    assert.match(contentSecurityPolicy("abc", { dev: false }), /script-src 'self' 'nonce-abc' 'strict-dynamic'/);
  });
});
