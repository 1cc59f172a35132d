/**
 * Lints one fixture file with the repository's own eslint configuration as if it stood at another path,
 * running only the named rules (rules that need no type information, so the fixture can be linted at paths
 * where no such file exists). The lint-rule tests (layering, persistence) read what each rule refuses there.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ESLint } from "eslint";

const ROOT = path.resolve(__dirname, "../..");

/** One refusal: the rule, its message, and the fixture's line it points at. */
export interface Refusal {
  ruleId: string;
  message: string;
  line: string;
}

/** `lintAs(where)`: what the rules refuse when `fixture` (a path from the repository root) is linted as `where`. */
export function fixtureLinter(fixture: string, rules: ReadonlySet<string>): (where: string) => Promise<Refusal[]> {
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
    ruleFilter: ({ ruleId }) => rules.has(ruleId),
  });
  const text = readFileSync(path.join(ROOT, fixture), "utf8");
  const lines = text.split("\n");
  return async (where) => {
    const [result] = await eslint.lintText(text, { filePath: path.join(ROOT, where) });
    assert.ok(result);
    return result.messages.map((message) => {
      assert.ok(message.ruleId, message.message); // a parse error would hide everything else
      return { ruleId: message.ruleId, message: message.message, line: lines[message.line - 1] ?? "" };
    });
  };
}
