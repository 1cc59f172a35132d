/**
 * text/latex outputs (IPython's `Latex`, `Math`, sympy) rendered with KaTeX.
 * The value is what Jupyter hands MathJax: math in `$…$`, `$$…$$`, `\(…\)`,
 * `\[…\]` or a bare `\begin{…}` environment, possibly with text around it.
 * KaTeX writes HTML from the TeX (its `trust` option stays off: no links or
 * raw HTML from `\href`/`\htmlClass`), and the result still goes through the
 * sanitizer like every HTML output. Without a DOM it returns null and the
 * caller shows the plain-text form.
 */
import katex from "katex";
import { sanitizeHtml } from "./sanitize-html";

const MATH = /\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\begin\{([a-z*]+)\}[\s\S]+?\\end\{\3\}|\$([^$\n]+?)\$|\\\(([\s\S]+?)\\\)/g;

export function latexToSafeHtml(source: string): string | null {
  const parts: string[] = [];
  let last = 0;
  let found = false;
  for (const match of source.matchAll(MATH)) {
    found = true;
    parts.push(escapeText(source.slice(last, match.index)));
    const [whole, display, bracket, environment, inline, paren] = match;
    const tex = display ?? bracket ?? (environment !== undefined ? whole : (inline ?? paren ?? ""));
    parts.push(render(tex, inline === undefined && paren === undefined));
    last = match.index + whole.length;
  }
  // No delimiters: the whole value is one formula (as `Math("x^2")` would be).
  if (!found) return sanitizeHtml(render(source, true));
  parts.push(escapeText(source.slice(last)));
  return sanitizeHtml(parts.join(""));
}

function render(tex: string, displayMode: boolean): string {
  return katex.renderToString(tex, { displayMode, throwOnError: false, output: "html", trust: false, strict: "ignore" });
}

function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
