/**
 * Applies pending migrations to the lab's database (what the server also does
 * when it opens it) and checks that the result matches schema.prisma.
 *
 *   npx tsx scripts/db-migrate.ts            $MGPULAB_DATABASE_URL, else $MGPULAB_DATA_DIR/lab.db (default ./data/lab.db)
 *   npx tsx scripts/db-migrate.ts <file.db>
 */
import { checkDrift, openDatabase } from "../server/persistence/database";
import { errorMessage } from "../server/core/errors";

async function main(file: string | undefined): Promise<number> {
  const db = await openDatabase({ file });
  try {
    process.stdout.write(
      db.appliedMigrations.length > 0 ? `${db.file}: applied ${db.appliedMigrations.join(", ")}\n` : `${db.file}: up to date\n`,
    );
    const drift = await checkDrift(db);
    if (drift === "") return 0;
    process.stderr.write(`${db.file} does not match prisma/schema.prisma; the difference:\n\n${drift}`);
    return 1;
  } finally {
    await db.close();
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`db-migrate: ${errorMessage(error)}\n`);
    process.exit(1);
  },
);
