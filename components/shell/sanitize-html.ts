/**
 * HTML from untrusted sources (markdown cells, text/html outputs) goes
 * through DOMPurify before it reaches the DOM. Without a DOM (server render)
 * DOMPurify cannot sanitise, so this returns null and callers show text.
 */
import DOMPurify from "dompurify";
import { Marked } from "marked";
import { mathExtension } from "./model/markdown-math";

// Markdown with TeX math ($…$, $$…$$) rendered by KaTeX; the HTML still goes through DOMPurify below.
export const markdown = new Marked({ gfm: true, breaks: false, async: false }, mathExtension);

if (DOMPurify.isSupported) {
  // Links in notebooks open beside the notebook, never in place of it.
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A" && node.hasAttribute("href")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
}

export function sanitizeHtml(html: string): string | null {
  if (!DOMPurify.isSupported) return null;
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true, svg: true, mathMl: true }, FORBID_TAGS: ["style", "form"] });
}

export function markdownToSafeHtml(source: string): string | null {
  const html = markdown.parse(source, { async: false });
  return sanitizeHtml(html);
}

/** One line of markdown (a question, a help text, a verdict sentence): inline elements only, no paragraph around it. */
export function inlineMarkdownToSafeHtml(source: string): string | null {
  const html = markdown.parseInline(source, { async: false });
  return sanitizeHtml(html);
}
