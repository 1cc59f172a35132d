/**
 * The lab's command line, for what is done before or beside a running lab:
 *
 *   npm run lab -- create-admin --email you@example.com [--name "Ada"]
 *       the first (or another) admin; the password is read from
 *       MGPULAB_ADMIN_PASSWORD, else from standard input (one line)
 *   npm run lab -- login-url [--url http://127.0.0.1:3000]
 *       a fresh one-time sign-in URL for a loopback lab (as `npm start` prints)
 *   npm run lab -- backup <file>
 *       a consistent copy of the lab's database, made while the lab serves
 *       (SQLite's online backup API; pg_dump for PostgreSQL)
 *   npm run lab -- restore <file>
 *       puts a backup back; refuses while a lab runs on the database
 *
 * All of them use the lab's database as the lab's settings name it
 * (MGPULAB_DATABASE_URL, else lab.db under MGPULAB_DATA_DIR or ./data).
 */
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { Accounts } from "../server/auth/accounts";
import { localTokenUrl, mintLocalToken } from "../server/auth/local-token";
import { openDatabase, repositoriesOf, resolveDatabaseFile } from "../server/persistence";
import { backupLab, BackupError, restoreLab } from "../server/backup/lab-backup";
import { errorMessage } from "../server/core/errors";

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "backup" || command === "restore") return backupOrRestore(command, rest);
  const { values } = parseArgs({ args: rest, options: { email: { type: "string" }, name: { type: "string" }, url: { type: "string" } } });
  const dataDir = process.env.MGPULAB_DATA_DIR || undefined;
  // login-url is for a lab that is running (and so has migrated its database): its locks would stall the schema engine.
  if (command === "login-url" && !process.env.MGPULAB_DATABASE_URL && !existsSync(resolveDatabaseFile({ dataDir }))) return usage("no lab database here yet: start the lab once (npm start), or set MGPULAB_DATA_DIR");
  const db = await openDatabase({ dataDir, alreadyMigrated: command === "login-url" });
  try {
    if (command === "create-admin") {
      if (!values.email) return usage("create-admin needs --email");
      const password = process.env.MGPULAB_ADMIN_PASSWORD || (await readLine("password (at least 10 characters): "));
      const admin = await new Accounts(repositoriesOf(db).accounts).create({ email: values.email, name: values.name ?? "Admin", password, role: "admin" });
      process.stdout.write(`admin ${admin.email} created; sign in at /login\n`);
      return 0;
    }
    if (command === "login-url") {
      await repositoriesOf(db).users.ensure();
      const base = values.url ?? `http://${process.env.HOST || "127.0.0.1"}:${process.env.PORT || "3000"}`;
      process.stdout.write(`${localTokenUrl(base.replace(/\/$/, ""), await mintLocalToken(repositoriesOf(db).verifications))}\n`);
      return 0;
    }
    return usage(`unknown command ${JSON.stringify(command ?? "")}`);
  } finally {
    await db.close();
  }
}

/** Neither opens the database through Prisma: no migration runs, and a running lab is never waited on. */
async function backupOrRestore(command: "backup" | "restore", args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  if (positionals.length !== 1) return usage(`${command} needs one file`);
  const file = positionals[0]!;
  try {
    process.stdout.write(`${command === "backup" ? await backupLab(file) : await restoreLab(file)}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof BackupError)) throw error;
    process.stderr.write(`lab ${command}: ${error.message}\n`);
    return 1;
  }
}

function usage(problem: string): number {
  process.stderr.write(`${problem}\nusage: npm run lab -- create-admin --email EMAIL [--name NAME] | login-url [--url URL] | backup FILE | restore FILE\n`);
  return 2;
}

function readLine(prompt: string): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write(prompt);
  const lines = createInterface({ input: process.stdin });
  return new Promise((resolve) => {
    lines.once("line", (line) => {
      lines.close();
      resolve(line);
    });
    lines.once("close", () => resolve(""));
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`lab: ${errorMessage(error)}\n`);
    process.exit(1);
  },
);
