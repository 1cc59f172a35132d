"use client";
/** A toolbar button that does not take focus away from the notebook on click. */
import type { ReactNode } from "react";

interface Props {
  testId: string;
  title: string;
  disabled?: boolean;
  onClick(): void;
  children: ReactNode;
}

export default function ToolbarButton({ testId, title, disabled = false, onClick, children }: Props) {
  return (
    <button
      type="button"
      className="button toolbar-button"
      data-testid={testId}
      title={title}
      aria-label={title}
      disabled={disabled}
      // Keep focus (and edit/command mode) where it was; the click still fires.
      onMouseDown={(e) => e.preventDefault()}
      onClick={onClick}
    >
      {children}
    </button>
  );
}
