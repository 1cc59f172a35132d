/**
 * Writes the Python half of the kernel protocol from its TypeScript definition,
 * or checks that the checked-in file is what the definition gives.
 *
 *   npx tsx scripts/generate-kernel-protocol.ts                 write kernels/mgpulab_wire/protocol_generated.py
 *   npx tsx scripts/generate-kernel-protocol.ts --check         exit 1 when that file is stale
 *   npx tsx scripts/generate-kernel-protocol.ts --check --file F   check another copy (tests)
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PROTOCOL_SOURCE, PYTHON_PROTOCOL, REPO_ROOT, renderPythonFromSource } from "./kernel-protocol-source";

function firstDifference(expected: string, actual: string): string {
  const want = expected.split("\n");
  const got = actual.split("\n");
  for (let i = 0; i < Math.max(want.length, got.length); i++) {
    if (want[i] !== got[i]) return `line ${i + 1}:\n  generated: ${want[i] ?? "(end of file)"}\n  on disk:   ${got[i] ?? "(end of file)"}`;
  }
  return "";
}

/** The file's text, or "" when there is none yet (a missing file is as stale as a wrong one). */
function readIfPresent(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error: unknown) {
    if (error instanceof Error && "code" in error && error.code === "ENOENT") return "";
    throw error;
  }
}

async function main(args: string[]): Promise<number> {
  const check = args.includes("--check");
  const fileAt = args.indexOf("--file");
  const target = fileAt >= 0 && args[fileAt + 1] ? path.resolve(args[fileAt + 1]) : path.join(REPO_ROOT, PYTHON_PROTOCOL);
  const text = await renderPythonFromSource();
  if (!check) {
    writeFileSync(target, text);
    process.stdout.write(`wrote ${path.relative(REPO_ROOT, target)} from ${PROTOCOL_SOURCE}\n`);
    return 0;
  }
  const current = readIfPresent(target);
  if (current === text) {
    process.stdout.write(`${path.relative(REPO_ROOT, target)} is up to date with ${PROTOCOL_SOURCE}\n`);
    return 0;
  }
  process.stderr.write(
    `${path.relative(REPO_ROOT, target)} is stale: it is not what ${PROTOCOL_SOURCE} gives. ` +
      `Run \`npm run protocol:generate\` and commit the result (never edit it by hand).\nFirst difference at ${firstDifference(text, current)}\n`,
  );
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`generate-kernel-protocol: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
