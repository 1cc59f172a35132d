"use client";
/**
 * stdout/stderr of a cell: played through the console model (\r progress
 * bars, cursor moves), coloured by ansi_up (HTML-escaped), and shown in a
 * single scrolling <pre> so even huge output is one DOM node. While the view
 * is scrolled to the bottom it follows new output.
 */
import { useLayoutEffect, useMemo, useRef, useState } from "react";
import { ansiToHtml, IncrementalConsole } from "../workshops/model/console-text";

interface Props {
  name: "stdout" | "stderr";
  text: string;
}

export default function StreamOutput({ name, text }: Props) {
  const [term] = useState(() => new IncrementalConsole());
  const html = useMemo(() => ansiToHtml(term.render(text)), [term, text]);
  const pre = useRef<HTMLPreElement>(null);
  const following = useRef(true);

  useLayoutEffect(() => {
    const el = pre.current;
    if (el !== null && following.current) el.scrollTop = el.scrollHeight;
  }, [html]);

  return (
    <pre
      ref={pre}
      className={`output-stream output-${name}`}
      data-testid="output-stream"
      data-stream={name}
      onScroll={(e) => {
        const el = e.currentTarget;
        following.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 4;
      }}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
