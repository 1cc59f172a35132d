/** prisma/postgres/schema.prisma is schema.prisma with PostgreSQL's provider and client directory, and is not stale. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { POSTGRES_SCHEMA_PATH, SCHEMA_PATH } from "../../server/persistence/migrations";
import { derivePostgresSchema, POSTGRES_SCHEMA_HEADER } from "../../server/persistence/postgres-schema";

describe("the derived PostgreSQL schema", () => {
  it("is up to date with schema.prisma (else: bash scripts/db-generate.sh)", () => {
    assert.equal(readFileSync(POSTGRES_SCHEMA_PATH, "utf8"), derivePostgresSchema(readFileSync(SCHEMA_PATH, "utf8")), "prisma/postgres/schema.prisma is stale: run bash scripts/db-generate.sh");
  });

  it("differs from schema.prisma only in the provider and the client's directory", () => {
    const source = readFileSync(SCHEMA_PATH, "utf8");
    const derived = derivePostgresSchema(source);
    assert.ok(derived.startsWith(POSTGRES_SCHEMA_HEADER));
    const before = source.split("\n");
    const after = derived.slice(POSTGRES_SCHEMA_HEADER.length).split("\n");
    const changed = before.flatMap((line, index) => (line === after[index] ? [] : [[line.trim(), after[index]!.trim()]]));
    assert.deepEqual(changed, [
      ['output       = "../server/persistence/generated"', 'output       = "../../server/persistence/generated-pg"'],
      ['provider = "sqlite"', 'provider = "postgresql"'],
    ]);
  });

  it("refuses a schema.prisma whose datasource or generator it cannot find", () => {
    assert.throws(() => derivePostgresSchema('datasource db {\n  provider = "postgresql"\n}\n'), /exactly one a datasource block with provider = "sqlite", found 0/);
  });
});
