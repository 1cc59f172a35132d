"use client";
/** A title that becomes a text field on click; `onSave` says whether the server took the new one. */
import { useState } from "react";
import TitleInput from "./TitleInput";

import "./EditableTitle.css";

interface Props {
  title: string;
  testId: string;
  /** Disabled while there is no server to rename on. */
  disabled?: boolean;
  onSave(title: string): Promise<boolean>;
}

export default function EditableTitle({ title, testId, disabled = false, onSave }: Props) {
  const [editing, setEditing] = useState(false);
  const [saving, setSaving] = useState<string | null>(null);

  if (editing) {
    return (
      <TitleInput
        initial={title}
        testId={`${testId}-input`}
        onCancel={() => setEditing(false)}
        onCommit={(value) => {
          setEditing(false);
          if (value.trim() === "" || value.trim() === title) return;
          setSaving(value.trim());
          void onSave(value).finally(() => setSaving(null));
        }}
      />
    );
  }
  return (
    <button
      type="button"
      className="title-button"
      data-testid={testId}
      data-saving={saving !== null}
      title={disabled ? title : `${title} — click to rename`}
      disabled={disabled}
      onClick={() => setEditing(true)}
    >
      {saving ?? title}
    </button>
  );
}
