/**
 * prisma/postgres/schema.prisma is derived from prisma/schema.prisma, the one
 * schema anyone edits: Prisma generates a client per provider, so PostgreSQL
 * needs its own schema file, differing only in the datasource's provider and
 * the generated client's directory. scripts/db-generate.sh writes it;
 * `db-migrate-diff.ts --check` and a unit test fail when it is stale.
 */

export const POSTGRES_SCHEMA_HEADER =
  "// GENERATED from ../schema.prisma by scripts/db-generate.sh: do not edit, edit ../schema.prisma.\n" +
  "// Only the datasource's provider and the client's output directory differ.\n\n";

/** The PostgreSQL schema for `sqliteSchema` (the text of prisma/schema.prisma). */
export function derivePostgresSchema(sqliteSchema: string): string {
  const swapped = replaceOnce(
    replaceOnce(sqliteSchema, /(datasource db \{\s*provider\s*=\s*)"sqlite"/, '$1"postgresql"', 'a datasource block with provider = "sqlite"'),
    // The derived file sits one directory deeper (prisma/postgres/).
    /(generator client \{[^}]*output\s*=\s*)"\.\.\/server\/persistence\/generated"/,
    '$1"../../server/persistence/generated-pg"',
    'a client generator with output = "../server/persistence/generated"',
  );
  return POSTGRES_SCHEMA_HEADER + swapped;
}

function replaceOnce(text: string, pattern: RegExp, replacement: string, what: string): string {
  const global = new RegExp(pattern.source, "g");
  const found = text.match(global)?.length ?? 0;
  if (found !== 1) throw new Error(`prisma/schema.prisma: expected exactly one ${what}, found ${found}`);
  return text.replace(pattern, replacement);
}
