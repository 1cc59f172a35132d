"use client";
/** H: every keyboard shortcut, listed from the table the key handling uses (model/shortcuts.ts). */
import { bindingLabel, shortcutSections } from "./model/shortcuts";
import Dialog from "../shell/Dialog";

interface Props {
  onClose(): void;
}

export default function ShortcutHelp({ onClose }: Props) {
  return (
    <Dialog title="Keyboard shortcuts" testId="shortcut-help" onClose={onClose}>
      {shortcutSections().map((section) => (
        <section key={section.title} className="shortcut-section">
          <h3>{section.title}</h3>
          <table className="shortcut-table">
            <tbody>
              {section.shortcuts.map((s) => (
                <tr key={s.command} data-testid="shortcut-row" data-command={s.command}>
                  <td className="shortcut-keys">
                    {s.bindings.map((b, i) => (
                      <span key={i}>
                        {i > 0 && " / "}
                        <kbd className="kbd">{bindingLabel(b)}</kbd>
                      </span>
                    ))}
                  </td>
                  <td>{s.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ))}
    </Dialog>
  );
}
