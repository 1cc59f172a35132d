/**
 * The rules the stylesheets in app/ and components/ keep (see the headers of
 * app/tokens.css and app/globals.css): a colour is spelled only in
 * app/tokens.css; every var(--token) used names a token that exists; a class
 * is styled from one file only, the one whose selectors it scopes; a feature
 * stylesheet styles only under its own classes; and every stylesheet is
 * imported by something, so none lies dead. The last test runs the same
 * checks on small sheets that break each rule, so none of them can pass by
 * seeing nothing.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { rawColours, readStylesheet, scopeClass, type Stylesheet } from "../helpers/stylesheet-scan";

const ROOT = path.resolve(__dirname, "..", "..");
const TOKENS = "app/tokens.css";
/** The base sheet: the only one that may style bare elements (html, body, a). */
const BASE = "app/globals.css";

function walk(dir: string, keep: (file: string) => boolean): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return walk(relative, keep);
    return keep(entry.name) ? [relative] : [];
  });
}

function repoSheets(): Map<string, Stylesheet> {
  const files = ["app", "components"].flatMap((dir) => walk(dir, (name) => name.endsWith(".css")));
  return new Map(files.map((file) => [file, readStylesheet(readFileSync(path.join(ROOT, file), "utf8"))]));
}

/** `file:line property: value → colour` for each colour spelled outside the tokens file. */
function colourFindings(sheets: ReadonlyMap<string, Stylesheet>): string[] {
  const found: string[] = [];
  for (const [file, sheet] of sheets) {
    if (file === TOKENS) continue;
    for (const rule of sheet.rules) {
      for (const d of rule.declarations) {
        for (const colour of rawColours(d.value)) found.push(`${file}:${d.line} ${d.property}: ${d.value} → ${colour}`);
      }
    }
  }
  return found;
}

/** A class (or keyframes name) that scopes selectors in more than one file. */
function duplicateScopes(sheets: ReadonlyMap<string, Stylesheet>): string[] {
  const owners = new Map<string, Set<string>>();
  const own = (name: string, file: string) => owners.set(name, (owners.get(name) ?? new Set()).add(file));
  for (const [file, sheet] of sheets) {
    for (const rule of sheet.rules) {
      if (rule.keyframe) continue;
      for (const selector of rule.selectors) {
        const scope = scopeClass(selector);
        if (scope !== null) own(`.${scope}`, file);
      }
    }
    for (const name of sheet.keyframes) own(`@keyframes ${name}`, file);
  }
  return [...owners].filter(([, files]) => files.size > 1).map(([name, files]) => `${name} in ${[...files].sort().join(" and ")}`);
}

/** Selectors outside the base sheet that do not start from a class of their own. */
function unscopedSelectors(sheets: ReadonlyMap<string, Stylesheet>): string[] {
  const found: string[] = [];
  for (const [file, sheet] of sheets) {
    if (file === BASE || file === TOKENS) continue;
    for (const rule of sheet.rules) {
      if (rule.keyframe) continue;
      for (const selector of rule.selectors) if (scopeClass(selector) === null) found.push(`${file}:${rule.line} ${selector}`);
    }
  }
  return found;
}

/** Custom properties defined in the tokens file or the base sheet's :root. */
function definedProperties(sheets: ReadonlyMap<string, Stylesheet>): Set<string> {
  const names = new Set<string>();
  for (const file of [TOKENS, BASE]) {
    for (const rule of sheets.get(file)?.rules ?? []) {
      if (!rule.selectors.includes(":root")) continue;
      for (const d of rule.declarations) if (d.property.startsWith("--")) names.add(d.property);
    }
  }
  return names;
}

/** Tokens a stylesheet's declarations use. */
function sheetReferences(sheet: Stylesheet): string[] {
  return sheet.rules.flatMap((rule) => rule.declarations.flatMap((d) => [...d.value.matchAll(/var\(\s*(--[\w-]+)/g)].map((m) => m[1]!)));
}

/** Tokens a component uses as an inline colour: a quoted string that is exactly var(--token), as in stroke="var(--chart-grid)". */
function sourceReferences(text: string): string[] {
  return [...text.matchAll(/(["'])var\(\s*(--[\w-]+)\s*\)\1/g)].map((m) => m[2]!);
}

describe("stylesheets", () => {
  const sheets = repoSheets();
  const sources = ["app", "components"].flatMap((dir) => walk(dir, (name) => /\.tsx?$/.test(name)));

  it("finds the tokens file, the base sheet and feature sheets", () => {
    assert.ok(sheets.has(TOKENS) && sheets.has(BASE), [...sheets.keys()].join(", "));
    assert.ok(sheets.size > 10, `${sheets.size} stylesheets`);
  });

  it("spells a colour only in app/tokens.css", () => {
    assert.deepEqual(colourFindings(sheets), []);
  });

  it("uses only tokens that exist, in stylesheets and in components' inline colours", () => {
    const defined = definedProperties(sheets);
    const missing: string[] = [];
    for (const [file, sheet] of sheets) for (const name of sheetReferences(sheet)) if (!defined.has(name)) missing.push(`${file}: ${name}`);
    let inline = 0;
    for (const file of sources) {
      for (const name of sourceReferences(readFileSync(path.join(ROOT, file), "utf8"))) {
        inline++;
        if (!defined.has(name)) missing.push(`${file}: ${name}`);
      }
    }
    assert.ok(inline > 0, "the charts' inline colours are tokens");
    assert.deepEqual(missing, []);
  });

  it("styles each class from one file only", () => {
    assert.deepEqual(duplicateScopes(sheets), []);
  });

  it("keeps feature stylesheets under their own classes (bare elements only in app/globals.css)", () => {
    assert.deepEqual(unscopedSelectors(sheets), []);
  });

  it("imports every stylesheet from a component, the layout, or another stylesheet", () => {
    const imported = new Set<string>();
    for (const file of sources) {
      for (const m of readFileSync(path.join(ROOT, file), "utf8").matchAll(/^import\s+["']([^"']+\.css)["'];?$/gm)) imported.add(path.posix.join(path.posix.dirname(file), m[1]!));
    }
    for (const [file, sheet] of sheets) for (const target of sheet.imports) imported.add(path.posix.join(path.posix.dirname(file), target));
    assert.deepEqual([...sheets.keys()].filter((file) => !imported.has(file)), []);
  });

  it("catches each broken rule in sheets written to break them", () => {
    const broken = new Map<string, Stylesheet>([
      [TOKENS, readStylesheet(":root { --accent: #1976d2; --ok: rgb(46 125 50); }")],
      [
        BASE,
        readStylesheet(`
          @import "./tokens.css";
          /* #123456 in a comment is no colour */
          a { color: var(--accent); font-family: "red"; background: url("#abc"); border-color: transparent; outline-color: currentColor; }
          .button { color: #FFF; }
          @keyframes pulse { 50% { background: navy; } }
        `),
      ],
      [
        "components/Thing.css",
        readStylesheet(`
          .thing { box-shadow: 0 1px 2px rgba(0, 0, 0, 0.1); border: 1px solid var(--ok); }
          @media (max-width: 720px) { .thing-wide { color: Red; } }
          .button.thing-action { padding: 0; }
          ul > li { margin: 0; }
          @keyframes pulse { to { opacity: 0; } }
        `),
      ],
    ]);
    assert.deepEqual(
      colourFindings(broken).map((f) => f.replace(/^(\S+):\d+ .* → (.*)$/, "$1 $2")),
      [`${BASE} #FFF`, `${BASE} navy`, "components/Thing.css rgba()", "components/Thing.css Red"],
    );
    assert.deepEqual(duplicateScopes(broken), [`.button in ${BASE} and components/Thing.css`, `@keyframes pulse in ${BASE} and components/Thing.css`]);
    assert.deepEqual(unscopedSelectors(broken), ["components/Thing.css:5 ul > li"]);
    assert.deepEqual([...definedProperties(broken)].sort(), ["--accent", "--ok"]);
    assert.deepEqual(sheetReferences(broken.get("components/Thing.css")!), ["--ok"]);
    assert.deepEqual(sourceReferences(`<line stroke="var(--chart-grid)" /> // var(--not-a-use)`), ["--chart-grid"]);
    assert.deepEqual(broken.get(BASE)?.imports, ["./tokens.css"]);
    assert.throws(() => readStylesheet(".a { .b { color: var(--x); } }"), /nested rule/);
    assert.throws(() => readStylesheet(".a { color: var(--x);"), /unclosed block/);
  });
});
