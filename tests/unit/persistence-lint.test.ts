/**
 * All database access goes through server/persistence (eslint.config.mjs):
 * the fixture, linted as a file of server/, is refused at each way it
 * reaches the Prisma client; as a file of server/persistence, or of tests/,
 * it passes. Only these rules run (they need no type information, so the
 * fixture can be linted at paths where no such file exists).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fixtureLinter } from "../helpers/lint-fixture";

const FIXTURE = "tests/fixtures/prisma-outside-persistence.ts";
const lintAs = fixtureLinter(FIXTURE, new Set(["no-restricted-imports", "no-restricted-syntax"]));

/** What is refused when the fixture is linted as `where`: the offending line's code, trimmed, with the rule that refused it. */
async function refusals(where: string): Promise<string[]> {
  return (await lintAs(where)).map(({ ruleId, message, line }) => {
    if (ruleId === "no-restricted-syntax") assert.match(message, /goes through server\/persistence/);
    return `${line.trim()} (${ruleId})`;
  });
}

describe("the persistence lint rule", () => {
  it("refuses the Prisma client, its generated code, a Database's client, transactions and raw queries outside server/persistence", async () => {
    assert.deepEqual(await refusals("server/notebook/prisma-outside-persistence.ts"), [
      'import type { Database, PrismaClient } from "../../server/persistence"; (no-restricted-syntax)',
      'import { Prisma } from "../../server/persistence/generated/client"; (no-restricted-imports)',
      "return db.prisma.user.count(); (no-restricted-syntax)",
      'return db["prisma"].notebook.count(); (no-restricted-syntax)',
      "export function clientOf({ prisma }: Database): PrismaClient { (no-restricted-syntax)",
      "await client.$transaction([]); (no-restricted-syntax)",
      "return client.$queryRaw`SELECT 1`; (no-restricted-syntax)",
    ]);
  });

  it("refuses it in the server's top-level files too (server/lab.ts wires repositories, not the client)", async () => {
    assert.equal((await refusals("server/prisma-outside-persistence.ts")).length, 7);
  });

  for (const where of ["server/persistence/prisma-outside-persistence.ts", FIXTURE]) {
    it(`allows it in ${where.split("/").slice(0, -1).join("/")}/`, async () => {
      assert.deepEqual(await refusals(where), []);
    });
  }
});
