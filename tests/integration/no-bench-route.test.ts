/**
 * Benchmark pages are not part of the product: the chart benchmark's page is
 * served by the benchmark itself (tests/bench/charts-page/serve.ts), never by
 * the lab, so a signed-in user of a started lab (production build) finds no
 * /bench route. The lab's own notebook list answers the same session, so the
 * 404 is the route's absence, not a refused session.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { labFetch } from "../helpers/lab-session";
import { LabServer } from "../helpers/lab-server";

const LIMIT = { timeout: 60_000 };

describe("the lab serves no benchmark page", () => {
  let server: LabServer;
  before(async () => {
    server = await LabServer.start();
  });
  after(async () => {
    await server?.stop();
  });

  it("answers 404 to a signed-in user for /bench/charts, and 200 for its own page", LIMIT, async () => {
    assert.ok(server.cookie, "the lab printed a sign-in URL and the test signed in");
    const own = await labFetch(`${server.url}/`);
    assert.equal(own.status, 200, "the lab's own page answers the session");
    for (const path of ["/bench/charts", "/bench/charts?scenario=first-render&budget=1200", "/bench"]) {
      const response = await labFetch(`${server.url}${path}`);
      assert.equal(response.status, 404, `${path} answered ${response.status}`);
    }
  });
});
