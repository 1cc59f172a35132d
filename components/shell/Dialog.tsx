"use client";
/** A modal dialog over the page: Esc or a click outside closes it; focus moves into it on opening. */
import { useEffect, useRef, type ReactNode } from "react";

import "./Dialog.css";

interface Props {
  title: string;
  testId: string;
  onClose(): void;
  children: ReactNode;
  /** Lays the dialog at the top of the page (the command palette) instead of its middle. */
  top?: boolean;
}

export default function Dialog({ title, testId, onClose, children, top = false }: Props) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // Something inside that wants focus (the palette's field) has it already; otherwise the dialog takes it, so Esc reaches it.
    if (!box.current?.contains(document.activeElement)) box.current?.focus();
  }, []);
  return (
    <div className={`dialog-backdrop${top ? " dialog-top" : ""}`} onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        ref={box}
        className="dialog"
        role="dialog"
        aria-modal="true"
        aria-label={title}
        data-testid={testId}
        tabIndex={-1}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            onClose();
          }
        }}
      >
        <div className="dialog-head">
          <h2>{title}</h2>
          <button type="button" className="button button-ghost" aria-label="Close" data-testid={`${testId}-close`} onClick={onClose}>
            ×
          </button>
        </div>
        <div className="dialog-body">{children}</div>
      </div>
    </div>
  );
}
