/**
 * The notebook's commands as the palette offers them: each with its label,
 * its keys (from the shortcut table) and what it does. Built from the
 * controller and a few page actions, so the palette and the keyboard run the
 * very same code.
 */
import type { KernelStatus } from "../../../server/core/protocol/notebook-model";
import type { NotebookController } from "./notebook-controller";
import type { PaletteCommand } from "./palette";
import { shortcutLabel, type ShortcutCommand } from "./shortcuts";
import type { ThemeChoice } from "../../shell/model/theme";

export interface RunnableCommand extends PaletteCommand {
  run(): void;
}

export interface CommandContext {
  controller: NotebookController;
  kernel: KernelStatus["state"];
  canEdit: boolean;
  canRun: boolean;
  hasSelection: boolean;
  setTheme(choice: ThemeChoice): void;
  exportNotebook(): void;
}

export function notebookCommands(ctx: CommandContext): RunnableCommand[] {
  const { controller: c } = ctx;
  const key = (command: ShortcutCommand, label: string, need: "edit" | "run" | null = null): RunnableCommand => ({
    id: command,
    label,
    keys: shortcutLabel(command),
    disabled: (need === "edit" && !ctx.canEdit) || (need === "run" && !ctx.canRun),
    run: () => c.runCommand(command),
  });
  const plain = (id: string, label: string, run: () => void, disabled = false): RunnableCommand => ({ id, label, keys: "", disabled, run });
  const busy = ctx.kernel === "busy" || ctx.kernel === "starting";
  return [
    key("run-advance", "Run the selected cell and select below", "run"),
    key("run-in-place", "Run the selected cell", "run"),
    key("run-insert", "Run the selected cell and insert below", "run"),
    plain("run-all", "Run all cells", () => c.runAll(), !ctx.canRun),
    { ...key("interrupt", "Interrupt the kernel", "run"), disabled: !ctx.canRun || !busy },
    plain("restart", "Restart the kernel", () => c.requestRestart(), !ctx.canRun),
    key("insert-above", "Insert a cell above", "edit"),
    key("insert-below", "Insert a cell below", "edit"),
    { ...key("delete-cell", "Delete the selected cell", "edit"), disabled: !ctx.canEdit || !ctx.hasSelection },
    { ...key("undo-delete", "Undo the last cell deletion", "edit"), disabled: !ctx.canEdit || c.getState().deletedCells.length === 0 },
    plain("move-up", "Move the cell up", () => c.moveSelected(-1), !ctx.canEdit || !ctx.hasSelection),
    plain("move-down", "Move the cell down", () => c.moveSelected(1), !ctx.canEdit || !ctx.hasSelection),
    key("to-markdown", "Change the cell to markdown", "edit"),
    key("to-code", "Change the cell to code", "edit"),
    plain("clear-outputs", "Clear all outputs", () => c.clearAllOutputs(), !ctx.canEdit),
    key("toggle-toc", "Toggle the table of contents"),
    key("find", "Find and replace"),
    key("help", "Show keyboard shortcuts"),
    plain("theme-dark", "Theme: dark", () => ctx.setTheme("dark")),
    plain("theme-light", "Theme: light", () => ctx.setTheme("light")),
    plain("theme-system", "Theme: follow the system", () => ctx.setTheme("system")),
    plain("export", "Export as Jupyter notebook (.ipynb)", () => ctx.exportNotebook()),
  ];
}
