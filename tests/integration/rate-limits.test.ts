/**
 * Sign-in and workshop joins are rate-limited per client address, with the
 * limits from the lab's config; past the limit the answer is 429 with when
 * to try again. Its own file (own process): Better Auth keeps its in-memory
 * counters per process, so other tests' sign-ins would count here.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SocketHarness } from "../helpers/socket-harness";

const LIMIT = { timeout: 60_000 };
const PASSWORD = "correct horse battery staple";

describe("rate limits", () => {
  const LOGIN = { max: 2, windowSeconds: 60 };
  const JOIN = { max: 4, windowSeconds: 60 };
  let harness: SocketHarness;

  before(async () => {
    harness = await SocketHarness.start({ auth: { loginRateLimit: LOGIN, joinRateLimit: JOIN } });
  });
  after(async () => harness?.close());

  it(`limits sign-in to ${LOGIN.max} per ${LOGIN.windowSeconds} s per address, with the configured limit`, LIMIT, async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < LOGIN.max + 2; attempt++) {
      const response = await fetch(`${harness.url}/api/auth/sign-in/email`, { method: "POST", headers: { "Content-Type": "application/json", Origin: harness.url }, body: JSON.stringify({ email: "nobody@example.com", password: "wrong password" }) });
      statuses.push(response.status);
      if (response.status === 429) assert.ok(Number(response.headers.get("x-retry-after")) > 0, "says when to try again");
    }
    assert.deepEqual(statuses, [...Array(LOGIN.max).fill(401), 429, 429]);
  });

  it(`limits workshop joins to ${JOIN.max} per ${JOIN.windowSeconds} s per address`, LIMIT, async () => {
    const facilitator = await harness.lab.access.accounts.create({ name: "Fa", email: "fa@example.com", password: PASSWORD, role: "facilitator" });
    const workshop = await harness.lab.workshops.create(facilitator.id, "Rate", ["dp-basics"]);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < JOIN.max + 1; attempt++) {
      const response = await fetch(`${harness.url}/api/auth/workshop/join`, { method: "POST", headers: { "Content-Type": "application/json", Origin: harness.url }, body: JSON.stringify({ code: attempt === 0 ? workshop.joinCode : "NOSUCHCODE", name: `p${attempt}` }) });
      statuses.push(response.status);
    }
    assert.deepEqual(statuses, [200, ...Array(JOIN.max - 1).fill(404), 429]);
  });

});
