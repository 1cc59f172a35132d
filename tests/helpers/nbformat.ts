/** Jupyter's own validator (Debian python3-nbformat) as the judge of an exported file. */
import { spawnSync } from "node:child_process";
import { chooseInterpreter } from "../../server/kernel/python-interpreter";

export function validateWithNbformat(text: string): { status: number | null; stderr: string } {
  const python = chooseInterpreter().executable;
  const run = spawnSync(python, ["-c", "import nbformat, sys; nbformat.validate(nbformat.reads(sys.stdin.read(), as_version=4))"], { input: text, encoding: "utf8" });
  return { status: run.status, stderr: run.stderr };
}
