import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Marked } from "marked";
import { mathExtension } from "../../components/shell/model/markdown-math";

const md = new Marked({ gfm: true, async: false }, mathExtension);
const html = (source: string): string => md.parse(source, { async: false });

describe("TeX math in markdown (KaTeX)", () => {
  it("renders $…$ inline and $$…$$ as display math", () => {
    const inline = html("Euler: $e^{i\\pi}+1=0$.");
    assert.match(inline, /<p>Euler: <span class="math" data-tex="e\^\{i\\pi\}\+1=0"><span class="katex">/);
    assert.doesNotMatch(inline, /<annotation/, "the TeX is kept as data-tex, not as MathML text a sanitiser would leave behind");
    assert.doesNotMatch(inline, /katex-display/);
    const block = html("$$\n\\sum_{i=1}^n i\n$$");
    assert.match(block, /class="math-display"><span class="math" data-tex="[^"]+"><span class="katex-display">/);
    assert.match(block, /<mo>∑<\/mo>/);
  });
  it("leaves code spans, fenced code, escaped dollars and prices alone", () => {
    assert.doesNotMatch(html("`$x$` and\n```\n$$y$$\n```"), /katex/);
    assert.doesNotMatch(html("costs \\$5 or \\$6"), /katex/);
    assert.doesNotMatch(html("from $5 to $6"), /katex/);
    assert.doesNotMatch(html("costs $ 5, or 6$ abroad"), /katex/, "a dollar followed by a space does not open math");
    assert.match(html("costs \\$5 or \\$6"), /costs \$5 or \$6/);
  });
  it("escapes the TeX kept in data-tex", () => {
    assert.match(html('$a<b "c"$'), /data-tex="a&lt;b &quot;c&quot;"/);
  });
  it("renders bad TeX as an error in place and never passes HTML through", () => {
    assert.match(html("$\\frac{1}$"), /katex-error|katex/);
    const injected = html("$\\href{javascript:alert(1)}{x}$ and $<img src=x onerror=alert(1)>$");
    assert.doesNotMatch(injected, /<img|href="javascript/);
  });
});
