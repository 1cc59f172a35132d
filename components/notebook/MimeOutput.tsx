"use client";
/**
 * A result or display output. A scenario's verdict report comes first, but
 * only once it validates (it is kernel output; a malformed one falls back to
 * the bundle's other forms). Then, as Jupyter orders them: HTML (sanitised),
 * markdown (sanitised), LaTeX (KaTeX, sanitised), SVG and PNG/JPEG images
 * (data: URLs in <img>, where SVG cannot run scripts), plain text. Without a
 * DOM (server render) the sanitised forms are skipped and plain text shows.
 */
/* eslint-disable @next/next/no-img-element -- kernel images are data: URLs, which next/image cannot optimise */
import { VERDICTS_MIME } from "../../server/core/protocol/metrics-model";
import type { MimeBundle } from "../../server/core/protocol/notebook-model";
import { parseVerdictReport } from "./model/verdict-reveal";
import { ansiToHtml } from "../workshops/model/console-text";
import { markdownToSafeHtml, sanitizeHtml } from "../shell/sanitize-html";
import { latexToSafeHtml } from "../shell/latex-html";
import VerdictReport from "./VerdictReport";

import "katex/dist/katex.min.css";
import "./MarkdownCell.css";

interface Props {
  data: MimeBundle;
}

export default function MimeOutput({ data }: Props) {
  const verdicts = data[VERDICTS_MIME];
  if (verdicts === undefined) return <OtherOutput data={data} />;
  const report = parseVerdictReport(verdicts);
  if (report !== null) return <VerdictReport report={report} />;
  const { [VERDICTS_MIME]: _malformed, ...rest } = data;
  if (Object.keys(rest).length > 0) return <OtherOutput data={rest} />;
  return <div className="output-unsupported">[a verdict report that could not be read]</div>;
}

function OtherOutput({ data }: Props) {
  // Jupyter's order: the richest form the bundle offers first, text/plain last.
  const html = data["text/html"];
  const safeHtml = html === undefined ? null : sanitizeHtml(html);
  if (safeHtml !== null) return <div className="output-html" data-testid="output-html" dangerouslySetInnerHTML={{ __html: safeHtml }} />;
  const markdown = data["text/markdown"];
  const safeMarkdown = markdown === undefined ? null : markdownToSafeHtml(markdown);
  if (safeMarkdown !== null) return <div className="markdown-rendered output-markdown" data-testid="output-markdown" dangerouslySetInnerHTML={{ __html: safeMarkdown }} />;
  const latex = data["text/latex"];
  const safeLatex = latex === undefined ? null : latexToSafeHtml(latex);
  if (safeLatex !== null) return <div className="output-latex" data-testid="output-latex" dangerouslySetInnerHTML={{ __html: safeLatex }} />;
  // SVG as an image (a data: URL in <img>), where it cannot run scripts or reach the page.
  const svg = data["image/svg+xml"];
  if (svg !== undefined) {
    return <img className="output-image" data-testid="output-image" alt="output" src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`} />;
  }
  const png = data["image/png"];
  if (png !== undefined) return <img className="output-image" data-testid="output-image" alt="output" src={`data:image/png;base64,${png.trim()}`} />;
  const jpeg = data["image/jpeg"];
  if (jpeg !== undefined) return <img className="output-image" data-testid="output-image" alt="output" src={`data:image/jpeg;base64,${jpeg.trim()}`} />;
  const plain = data["text/plain"];
  if (plain !== undefined) {
    return <pre className="output-text" data-testid="output-text" dangerouslySetInnerHTML={{ __html: ansiToHtml(plain) }} />;
  }
  const other = Object.entries(data).find(([mime]) => mime.startsWith("text/") || mime.endsWith("json"));
  if (other !== undefined) return <pre className="output-text">{other[1]}</pre>;
  return <div className="output-unsupported">[output of type {Object.keys(data).join(", ") || "nothing"} cannot be shown]</div>;
}
