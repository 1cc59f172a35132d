/**
 * The layering is a lint rule (eslint.config.mjs): linted as a file of each
 * layer, the same imports pass or fail as README's "How it fits together"
 * says. The fixture is linted with the repository's own configuration, with
 * only the layering rules run (they need no type information, so the
 * fixture can be linted at paths where no such file exists).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fixtureLinter } from "../helpers/lint-fixture";

const FIXTURE = "tests/fixtures/upward-imports.ts";
const lintAs = fixtureLinter(FIXTURE, new Set(["import-x/no-restricted-paths", "import-x/no-nodejs-modules", "no-restricted-globals"]));

/** What is refused when the fixture is linted as `where`: the offending import (or global) with the rule that refused it. */
async function refusals(where: string): Promise<string[]> {
  return (await lintAs(where)).map(({ ruleId, line }) => {
    const from = /from "([^"]+)"/.exec(line)?.[1] ?? /\b(Buffer)\b/.exec(line)?.[1] ?? line;
    return `${from} (${ruleId})`;
  });
}

describe("the layering lint rule", () => {
  it("keeps server/core to itself: no browser code, no server code, no Node.js module or global", async () => {
    assert.deepEqual(await refusals("server/core/upward-imports.ts"), [
      "node:crypto (import-x/no-nodejs-modules)",
      "@/components/notebooks/NotebookList (import-x/no-restricted-paths)",
      "@/server/errors (import-x/no-restricted-paths)",
      "../../components/shell/model/format (import-x/no-restricted-paths)",
      "../../server/errors (import-x/no-restricted-paths)",
      "Buffer (no-restricted-globals)",
    ]);
  });

  for (const where of ["components/notebook/upward-imports.ts", "app/kernels/upward-imports.ts"]) {
    it(`lets the browser (${where.split("/")[0]}/) import server/core and nothing else of server/`, async () => {
      assert.deepEqual(await refusals(where), ["@/server/errors (import-x/no-restricted-paths)", "../../server/errors (import-x/no-restricted-paths)"]);
    });
  }

  it("keeps components/shell below the feature folders (it may import itself and server/core)", async () => {
    // Depth 2, as the fixture's relative imports are written for.
    assert.deepEqual(await refusals("components/shell/upward-imports.ts"), [
      "@/components/notebooks/NotebookList (import-x/no-restricted-paths)",
      "@/server/errors (import-x/no-restricted-paths)",
      "../../server/errors (import-x/no-restricted-paths)",
    ]);
  });

  it("keeps the server from importing the browser's code", async () => {
    assert.deepEqual(await refusals("server/notebook/upward-imports.ts"), [
      "@/components/notebooks/NotebookList (import-x/no-restricted-paths)",
      "../../components/shell/model/format (import-x/no-restricted-paths)",
    ]);
  });

  it("lets tests import anything (so `npm run lint` passes on the fixture where it is)", async () => {
    assert.deepEqual(await refusals(FIXTURE), []);
  });
});
