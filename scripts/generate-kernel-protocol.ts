/**
 * Writes the Python halves of the kernel and host agent protocols from their
 * TypeScript definitions, or checks that the checked-in files are what the
 * definitions give.
 *
 *   npx tsx scripts/generate-kernel-protocol.ts                 write kernels/mgpulab_wire/protocol_generated.py
 *                                                               and kernels/mgpulab_wire/agent_protocol_generated.py
 *   npx tsx scripts/generate-kernel-protocol.ts --check         exit 1 when either file is stale
 *   npx tsx scripts/generate-kernel-protocol.ts --check --file F [--protocol agent]
 *                                                               check another copy of one protocol's file
 *                                                               (tests; the kernel's unless --protocol agent)
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { KERNEL_PROTOCOL, PROTOCOL_TARGETS, type ProtocolTarget, REPO_ROOT, renderPythonFromSource } from "./kernel-protocol-source";
import { errorMessage } from "../server/core/errors";

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

/** Writes or checks one target's file; the exit code that step alone would give. */
async function one(protocol: ProtocolTarget, target: string, check: boolean): Promise<number> {
  const text = await renderPythonFromSource(protocol);
  if (!check) {
    writeFileSync(target, text);
    process.stdout.write(`wrote ${path.relative(REPO_ROOT, target)} from ${protocol.source}\n`);
    return 0;
  }
  const current = readIfPresent(target);
  if (current === text) {
    process.stdout.write(`${path.relative(REPO_ROOT, target)} is up to date with ${protocol.source}\n`);
    return 0;
  }
  process.stderr.write(
    `${path.relative(REPO_ROOT, target)} is stale: it is not what ${protocol.source} gives. ` +
      `Run \`npm run protocol:generate\` and commit the result (never edit it by hand).\nFirst difference at ${firstDifference(text, current)}\n`,
  );
  return 1;
}

async function main(args: string[]): Promise<number> {
  const check = args.includes("--check");
  const fileAt = args.indexOf("--file");
  const protocolAt = args.indexOf("--protocol");
  if (fileAt >= 0) {
    const name = protocolAt >= 0 ? args[protocolAt + 1] : KERNEL_PROTOCOL.name;
    const protocol = PROTOCOL_TARGETS.find((candidate) => candidate.name === name);
    if (!protocol) throw new Error(`--protocol must be one of ${PROTOCOL_TARGETS.map((candidate) => candidate.name).join(", ")}, got ${String(name)}`);
    if (!args[fileAt + 1]) throw new Error("--file needs a path");
    return one(protocol, path.resolve(args[fileAt + 1]), check);
  }
  let status = 0;
  for (const protocol of PROTOCOL_TARGETS) status = Math.max(status, await one(protocol, path.join(REPO_ROOT, protocol.python), check));
  return status;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`generate-kernel-protocol: ${errorMessage(error)}\n`);
    process.exit(2);
  },
);
