"use client";
/** A text field for a title: Enter or leaving it commits, Escape cancels. */
import { useState } from "react";
import { MAX_TITLE_CHARS } from "../../server/core/limits";

import "./TitleInput.css";

interface Props {
  initial: string;
  testId: string;
  className?: string;
  placeholder?: string;
  onCommit(value: string): void;
  onCancel(): void;
}

export default function TitleInput({ initial, testId, className = "", placeholder, onCommit, onCancel }: Props) {
  const [value, setValue] = useState(initial);
  // Enter commits and then the field unmounts, which fires blur: commit once.
  const [done, setDone] = useState(false);
  const finish = (commit: boolean) => {
    if (done) return;
    setDone(true);
    if (commit) onCommit(value);
    else onCancel();
  };
  return (
    <input
      className={`title-input ${className}`}
      data-testid={testId}
      aria-label="Notebook title"
      placeholder={placeholder}
      autoFocus
      maxLength={MAX_TITLE_CHARS}
      value={value}
      onChange={(e) => setValue(e.target.value)}
      onBlur={() => finish(true)}
      onKeyDown={(e) => {
        if (e.key === "Enter") {
          e.preventDefault();
          finish(true);
        } else if (e.key === "Escape") {
          e.preventDefault();
          finish(false);
        }
      }}
    />
  );
}
