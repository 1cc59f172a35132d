"use client";
/** Ctrl+Shift+P: the notebook's commands, fuzzy-filtered as you type; ↑/↓ choose, Enter runs, Esc closes. */
import { useMemo, useState } from "react";
import type { RunnableCommand } from "./model/notebook-commands";
import { filterCommands, moveHighlight } from "./model/palette";
import Dialog from "../shell/Dialog";

interface Props {
  commands: readonly RunnableCommand[];
  onClose(): void;
}

export default function CommandPalette({ commands, onClose }: Props) {
  const [query, setQuery] = useState("");
  const [highlight, setHighlight] = useState(0);
  const shown = useMemo(() => filterCommands(commands, query), [commands, query]);
  const current = Math.min(highlight, shown.length - 1);

  const runAt = (index: number): void => {
    const command = shown[index];
    if (command === undefined || command.disabled === true) return;
    // Closed first: a command that opens another panel (find, help) replaces the palette.
    onClose();
    command.run();
  };

  return (
    <Dialog title="Command palette" testId="command-palette" onClose={onClose} top>
      <input
        className="palette-input"
        data-testid="palette-input"
        aria-label="Type a command"
        placeholder="Type a command…"
        autoFocus
        value={query}
        role="combobox"
        aria-expanded="true"
        aria-controls="palette-list"
        aria-activedescendant={current >= 0 ? `palette-${shown[current]?.id}` : undefined}
        onChange={(e) => {
          setQuery(e.target.value);
          setHighlight(0);
        }}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown" || e.key === "ArrowUp") {
            e.preventDefault();
            setHighlight(moveHighlight(current, e.key === "ArrowDown" ? 1 : -1, shown.length));
          } else if (e.key === "Enter") {
            e.preventDefault();
            runAt(current);
          }
        }}
      />
      <ul className="palette-list" id="palette-list" role="listbox">
        {shown.length === 0 && <li className="palette-empty">No command matches</li>}
        {shown.map((command, i) => (
          <li
            key={command.id}
            id={`palette-${command.id}`}
            role="option"
            aria-selected={i === current}
            aria-disabled={command.disabled === true}
            className={`palette-item${i === current ? " palette-current" : ""}`}
            data-testid="palette-item"
            data-command={command.id}
            onMouseEnter={() => setHighlight(i)}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => runAt(i)}
          >
            <span>{command.label}</span>
            {command.keys !== "" && <kbd className="kbd">{command.keys}</kbd>}
          </li>
        ))}
      </ul>
    </Dialog>
  );
}
