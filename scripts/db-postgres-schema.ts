/**
 * Writes prisma/postgres/schema.prisma, derived from prisma/schema.prisma
 * (server/persistence/postgres-schema.ts); scripts/db-generate.sh runs it.
 *
 *   npx tsx scripts/db-postgres-schema.ts           write it when stale
 *   npx tsx scripts/db-postgres-schema.ts --check   exit 1 when it is stale (CI)
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { POSTGRES_SCHEMA_PATH, SCHEMA_PATH } from "../server/persistence/migrations";
import { derivePostgresSchema } from "../server/persistence/postgres-schema";
import { errorMessage } from "../server/core/errors";

async function main(args: string[]): Promise<number> {
  const wanted = derivePostgresSchema(await readFile(SCHEMA_PATH, "utf8"));
  const current = await readFile(POSTGRES_SCHEMA_PATH, "utf8").catch(() => null);
  if (current === wanted) return 0;
  const shown = path.relative(process.cwd(), POSTGRES_SCHEMA_PATH);
  if (args[0] === "--check") {
    process.stderr.write(`${shown} is stale (prisma/schema.prisma changed): run bash scripts/db-generate.sh\n`);
    return 1;
  }
  await writeFile(POSTGRES_SCHEMA_PATH, wanted);
  process.stdout.write(`db-postgres-schema: wrote ${shown}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`db-postgres-schema: ${errorMessage(error)}\n`);
    process.exit(1);
  },
);
