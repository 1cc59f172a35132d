"use client";
/**
 * Markdown written by the lab's scenarios (questions, help texts, claim
 * quotes, verdict sentences), rendered like a markdown cell: marked, then
 * DOMPurify. `inline` renders one line without a paragraph around it, so it
 * sits inside a label or a sentence. Without a DOM (server render) the
 * source is shown as text, never as unsanitised HTML.
 */
import { createElement, useMemo } from "react";
import { inlineMarkdownToSafeHtml, markdownToSafeHtml } from "./sanitize-html";

import "katex/dist/katex.min.css";
import "./Markdown.css";

interface Props {
  source: string;
  inline?: boolean;
  className?: string;
  /** The element rendered: a span (inline) or div (block) unless told. */
  as?: "span" | "div" | "blockquote" | "small" | "p";
  id?: string;
  testId?: string;
}

export default function Markdown({ source, inline = false, className, as, id, testId }: Props) {
  const html = useMemo(() => (inline ? inlineMarkdownToSafeHtml(source) : markdownToSafeHtml(source)), [source, inline]);
  const tag = as ?? (inline ? "span" : "div");
  const props = { className: className === undefined ? "markdown-text" : `markdown-text ${className}`, id, "data-testid": testId };
  if (html === null) return createElement(tag, props, source);
  return createElement(tag, { ...props, dangerouslySetInnerHTML: { __html: html } });
}
