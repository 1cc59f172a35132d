/** Who may read /metrics (server/auth/authorize.ts), every case of the rule: this machine directly, the bearer token from elsewhere, never a page. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { authorizeMetrics, metricsRequestOf, type MetricsRequest, type MetricsVerdict } from "../../server/auth/authorize";

const TOKEN = "0123456789abcdef0123456789abcdef";
const local: MetricsRequest = { peerAddress: "127.0.0.1", host: "127.0.0.1:3000", forwarded: false, origin: undefined, secFetchSite: undefined, authorization: undefined };
const remote: MetricsRequest = { ...local, peerAddress: "192.0.2.7", host: "lab.example.com" };

function outcome(verdict: MetricsVerdict): string {
  return verdict.ok ? "ok" : verdict.code;
}

describe("authorizeMetrics", () => {
  const cases: Array<[string, Partial<MetricsRequest>, string | null, string]> = [
    ["this machine, no token configured", {}, null, "ok"],
    ["this machine, a token configured but not sent", {}, TOKEN, "ok"],
    ["this machine over IPv6", { peerAddress: "::1", host: "[::1]:3000" }, null, "ok"],
    ["this machine, IPv4 mapped in IPv6", { peerAddress: "::ffff:127.0.0.1", host: "localhost:3000" }, null, "ok"],
    ["this machine sending a wrong token", { authorization: "Bearer nope" }, TOKEN, "unauthorized"],
    ["through a proxy on this machine (X-Forwarded-For), no token configured", { forwarded: true }, null, "not-found"],
    ["through a proxy on this machine, a token configured, not sent", { forwarded: true }, TOKEN, "unauthorized"],
    ["through a proxy on this machine, with the token", { forwarded: true, authorization: `Bearer ${TOKEN}` }, TOKEN, "ok"],
    ["a loopback peer asked under a public name (a proxy that forwards no header)", { host: "lab.example.com" }, null, "not-found"],
    ["another machine, no token configured", remote, null, "not-found"],
    ["another machine, a bearer sent but no token configured", { ...remote, authorization: `Bearer ${TOKEN}` }, null, "not-found"],
    ["another machine, no token sent", remote, TOKEN, "unauthorized"],
    ["another machine, the token", { ...remote, authorization: `Bearer ${TOKEN}` }, TOKEN, "ok"],
    ["another machine, the token, scheme in lower case", { ...remote, authorization: `bearer ${TOKEN}` }, TOKEN, "ok"],
    ["another machine, a token one character short", { ...remote, authorization: `Bearer ${TOKEN.slice(1)}` }, TOKEN, "unauthorized"],
    ["another machine, the token as a Basic password", { ...remote, authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` }, TOKEN, "unauthorized"],
    ["a page of another origin on this machine", { origin: "http://evil.example" }, null, "forbidden"],
    ["a page of the lab's own origin", { origin: "http://127.0.0.1:3000" }, null, "forbidden"],
    ["a cross-site fetch without Origin", { secFetchSite: "cross-site" }, null, "forbidden"],
    ["a same-origin fetch", { secFetchSite: "same-origin" }, null, "forbidden"],
    ["a page from elsewhere with the token", { ...remote, origin: "http://evil.example", authorization: `Bearer ${TOKEN}` }, TOKEN, "forbidden"],
    ["the operator's browser, the URL typed in", { secFetchSite: "none" }, null, "ok"],
  ];
  for (const [name, request, token, expected] of cases) {
    it(name, () => assert.equal(outcome(authorizeMetrics({ ...local, ...request }, token)), expected));
  }
});

describe("metricsRequestOf", () => {
  it("reads the peer, the Host, the credentials, and any proxy's forwarding header", () => {
    const request = metricsRequestOf({
      socket: { remoteAddress: "127.0.0.1" },
      headers: { host: "127.0.0.1:3000", authorization: "Bearer x", "sec-fetch-site": "none" },
    });
    assert.deepEqual(request, { peerAddress: "127.0.0.1", host: "127.0.0.1:3000", forwarded: false, origin: undefined, secFetchSite: "none", authorization: "Bearer x" });
    for (const header of ["forwarded", "x-forwarded-for", "x-real-ip"]) {
      assert.equal(metricsRequestOf({ socket: { remoteAddress: "127.0.0.1" }, headers: { host: "localhost", [header]: "203.0.113.9" } }).forwarded, true, header);
    }
  });
});
