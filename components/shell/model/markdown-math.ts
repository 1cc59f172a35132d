/**
 * TeX math in markdown, rendered by KaTeX: `$…$` inline, `$$…$$` display
 * (inline, or as a block on lines of its own). Written as marked extensions,
 * so marked's own tokenizer decides what is code: a `$` inside a code span or
 * a fenced block never starts math, and `\$` is marked's escape for a literal
 * dollar. Inline math follows pandoc's rule so that prices are not math: the
 * opening `$` is followed by a non-space, the closing one preceded by a
 * non-space and not followed by a digit ("$5 and $6" stays text).
 *
 * KaTeX's output is HTML + MathML; the caller still sanitises it (see
 * sanitize-html.ts), and KaTeX itself runs with `trust: false`, so
 * `\href`, `\htmlClass` and friends cannot inject anything.
 */
import katex from "katex";
import type { MarkedExtension, TokenizerAndRendererExtension } from "marked";

/**
 * KaTeX's HTML and MathML for `tex`, in a span that keeps the TeX source as
 * `data-tex`. The MathML's `<annotation>` (the TeX again) is dropped here:
 * DOMPurify does not allow `semantics`/`annotation` and would leave its text
 * behind for screen readers to read out.
 */
export function renderMath(tex: string, displayMode: boolean): string {
  const html = katex.renderToString(tex, { displayMode, throwOnError: false, trust: false, output: "htmlAndMathml" });
  return `<span class="math" data-tex="${escapeAttribute(tex)}">${html.replace(/<annotation encoding="application\/x-tex">[^<]*<\/annotation>/g, "")}</span>`;
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** `$$…$$` on lines of its own: a display block. */
const BLOCK = /^ {0,3}\$\$([\s\S]+?)\$\$[ \t]*(?:\n|$)/;
/** `$$…$$` inside a paragraph: display math inline. */
const INLINE_DISPLAY = /^\$\$(?!\$)([\s\S]+?)\$\$(?!\$)/;
/** `$…$` (pandoc's rule; `\$` inside is an escaped dollar of the TeX). */
const INLINE = /^\$(?![\s$])((?:\\.|[^\\$\n])*?[^\s\\])\$(?!\d)|^\$([^\s$\\])\$(?!\d)/;

const blockMath: TokenizerAndRendererExtension = {
  name: "blockMath",
  level: "block",
  start: (src) => src.match(/^ {0,3}\$\$/m)?.index,
  tokenizer(src) {
    const m = BLOCK.exec(src);
    if (m === null) return undefined;
    return { type: "blockMath", raw: m[0], text: (m[1] as string).trim() };
  },
  renderer: (token) => `<div class="math-display">${renderMath(String(token.text), true)}</div>\n`,
};

const inlineMath: TokenizerAndRendererExtension = {
  name: "inlineMath",
  level: "inline",
  start: (src) => src.indexOf("$") === -1 ? undefined : src.indexOf("$"),
  tokenizer(src) {
    const display = INLINE_DISPLAY.exec(src);
    if (display !== null) return { type: "inlineMath", raw: display[0], text: (display[1] as string).trim(), display: true };
    const m = INLINE.exec(src);
    if (m === null) return undefined;
    return { type: "inlineMath", raw: m[0], text: m[1] ?? m[2] ?? "", display: false };
  },
  renderer: (token) => renderMath(String(token.text), token.display === true),
};

export const mathExtension: MarkedExtension = { extensions: [blockMath, inlineMath] };
