/** The HTTP route table: which path is which route (with the id it carries), and every route's access need. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { apiRouteOf, HTTP_ROUTES, routeRuleOf } from "../../server/core/protocol/routes-http";

describe("HTTP routes", () => {
  it("recognises each route's path, with the id it carries", () => {
    assert.deepEqual(apiRouteOf("/api/notebooks/import"), { name: "import-notebook" });
    assert.deepEqual(apiRouteOf("/api/notebooks/cmwz00xl1/export"), { name: "export-notebook", notebookId: "cmwz00xl1" });
    assert.deepEqual(apiRouteOf("/api/executions"), { name: "list-executions" });
    assert.deepEqual(apiRouteOf("/api/executions/e_1-2/metrics"), { name: "execution-metrics", executionId: "e_1-2" });
    assert.deepEqual(apiRouteOf("/api/workshops/RV5JBVBC/summary.csv"), { name: "workshop-summary", workshopId: "RV5JBVBC" });
  });

  it("answers no route for anything else: other paths, ids that are not ids, near misses", () => {
    for (const path of [
      "/api/notebooks",
      "/api/notebooks/import/",
      "/api/notebooks/a/b/export",
      "/api/notebooks/../export",
      `/api/notebooks/${"x".repeat(65)}/export`,
      "/api/notebooks/a%2Fb/export",
      "/api/workshops/W1/summaryXcsv",
      "/api/executions/e1/metrics/extra",
      "/API/executions",
      "/metrics",
    ]) {
      assert.equal(apiRouteOf(path), null, path);
    }
  });

  it("gives every route the access need its table declares", () => {
    assert.deepEqual(routeRuleOf({ name: "import-notebook" }), { kind: "lab", action: "create-notebook" });
    assert.deepEqual(routeRuleOf({ name: "export-notebook", notebookId: "n" }), { kind: "notebook", action: "read" });
    assert.deepEqual(routeRuleOf({ name: "list-executions" }), { kind: "lab", action: "list-own" });
    assert.deepEqual(routeRuleOf({ name: "execution-metrics", executionId: "e" }), { kind: "execution" });
    assert.deepEqual(routeRuleOf({ name: "workshop-summary", workshopId: "w" }), { kind: "workshop" });
    assert.deepEqual(Object.keys(HTTP_ROUTES).sort(), ["execution-metrics", "export-notebook", "import-notebook", "list-executions", "workshop-summary"]);
  });
});
