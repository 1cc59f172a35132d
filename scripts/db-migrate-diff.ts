/**
 * The developer workflow in place of `prisma migrate dev` (whose native
 * schema engine cannot be downloaded here): diff prisma/migrations against
 * prisma/schema.prisma with the WebAssembly engine.
 *
 *   npx tsx scripts/db-migrate-diff.ts                 print the next migration's SQL
 *   npx tsx scripts/db-migrate-diff.ts --write <name>  write prisma/migrations/<timestamp>_<name>/migration.sql
 *   npx tsx scripts/db-migrate-diff.ts --check         exit 1 when schema.prisma has changes no migration holds (CI)
 *
 * After writing a migration, regenerate the client: bash scripts/db-generate.sh
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { diffToSchema, MIGRATIONS_DIR } from "../server/persistence/migrations";

function timestamp(date = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}`;
}

async function main(args: string[]): Promise<number> {
  const sql = await diffToSchema("migrations");
  if (args[0] === "--check") {
    if (sql === "") return 0;
    process.stderr.write(`schema.prisma has changes that no migration holds; run: npx tsx scripts/db-migrate-diff.ts --write <name>\n\n${sql}`);
    return 1;
  }
  if (args[0] === "--write") {
    const name = args[1] ?? "";
    if (!/^[a-z0-9_]{1,60}$/.test(name)) {
      process.stderr.write("usage: db-migrate-diff.ts --write <name>   (name: lower-case letters, digits and _)\n");
      return 2;
    }
    if (sql === "") {
      process.stderr.write("no drift: prisma/migrations already matches schema.prisma; nothing written\n");
      return 0;
    }
    const directory = path.join(MIGRATIONS_DIR, `${timestamp()}_${name}`);
    await mkdir(directory, { recursive: true });
    await writeFile(path.join(directory, "migration.sql"), sql);
    process.stdout.write(`wrote ${path.relative(process.cwd(), path.join(directory, "migration.sql"))}\n`);
    return 0;
  }
  if (args.length > 0) {
    process.stderr.write("usage: db-migrate-diff.ts [--check | --write <name>]\n");
    return 2;
  }
  process.stdout.write(sql === "" ? "-- no drift: prisma/migrations matches schema.prisma\n" : sql);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`db-migrate-diff: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
