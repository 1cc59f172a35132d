/**
 * The keyboard and the selection: keys and palette commands go through the
 * command-mode machine (command-mode.ts), and the actions it yields become
 * intents, unless this viewer may not do one (then nothing changes, not even
 * the selection a new cell would take). Separate from what the intents do:
 * this piece only decides which intent a key means and where the selection is.
 */
import type { CellKind } from "../../../server/core/protocol/notebook-model";
import { handleKey, runCommand, type CommandAction, type CommandModeState, type KeyInput, type KeyResult } from "./command-mode";
import { newCellId } from "../../shell/model/ids";
import { needOf, type AccessNeed } from "./notebook-access";
import type { NotebookSender } from "./notebook-sender";
import type { NotebookViewState, OpenPanel } from "./notebook-view-state";
import type { ShortcutCommand } from "./shortcuts";
import type { ViewStore } from "../../shell/model/view-store";

/** What a key can ask the notebook to do. */
export interface KeyIntents {
  runCells(cellIds: readonly string[]): void;
  insertCell(index: number, kind: CellKind, cellId: string): void;
  deleteCell(cellId: string): void;
  undoDelete(): void;
  setKind(cellId: string, kind: CellKind): void;
  interrupt(): void;
  requestRestart(): void;
}

export class NotebookKeys {
  constructor(
    private readonly store: ViewStore<NotebookViewState>,
    private readonly sender: NotebookSender,
    private readonly intents: KeyIntents,
  ) {}

  /** A key pressed in command mode, or one of the run/escape keys inside an editor. */
  handleKey(input: KeyInput): boolean {
    const { ui, doc } = this.store.getState();
    const result = handleKey(ui, input, { cells: doc?.cells ?? [], newCellId: newCellId() });
    if (!this.take(result)) this.store.update({ ui: { ...this.store.getState().ui, chord: null } });
    return result.handled;
  }

  /** A shortcut's command chosen elsewhere (the command palette): the same effect as its keys. */
  runCommand(command: ShortcutCommand): void {
    const { ui, doc } = this.store.getState();
    this.take(runCommand({ ...ui, mode: "command" }, command, { cells: doc?.cells ?? [], newCellId: newCellId() }));
  }

  /** Keys pressed in command mode, whatever mode the page was in (the toolbar's delete is D, D). */
  pressInCommandMode(keys: readonly string[]): void {
    this.store.update({ ui: { ...this.store.getState().ui, mode: "command", chord: null } });
    for (const key of keys) this.press({ key });
  }

  /** A key pressed now, with the modifiers given (none by default). */
  press(key: Pick<KeyInput, "key"> & Partial<KeyInput>): boolean {
    return this.handleKey({ shift: false, ctrl: false, alt: false, meta: false, at: now(), ...key });
  }

  /** Opens a dialog or bar (closing any other), or closes it with null. */
  setPanel(panel: OpenPanel | null): void {
    if (this.store.getState().panel !== panel) this.store.update({ panel });
  }

  toggleToc(): void {
    this.store.update({ tocOpen: !this.store.getState().tocOpen });
  }

  selectCell(cellId: string, mode: CommandModeState["mode"] = "command"): void {
    const ui = this.store.getState().ui;
    if (ui.selectedId === cellId && ui.mode === mode) return;
    this.store.update({ ui: { ...ui, selectedId: cellId, mode, chord: null } });
  }

  editorBlurred(cellId: string): void {
    const ui = this.store.getState().ui;
    if (ui.mode === "edit" && ui.selectedId === cellId) this.store.update({ ui: { ...ui, mode: "command" } });
  }

  /** The selected cell's index, or -1. */
  selectedIndex(): number {
    const { ui, doc } = this.store.getState();
    return ui.selectedId === null ? -1 : (doc?.cells.findIndex((c) => c.id === ui.selectedId) ?? -1);
  }

  /** Takes the machine's result, or nothing of it when this viewer may not do one of its actions (false). */
  private take(result: KeyResult): boolean {
    const refused = result.actions.map(actionNeed).find((need) => need !== null && !this.sender.allowed(need));
    if (refused !== undefined) return false;
    this.store.update({ ui: result.state });
    for (const action of result.actions) this.perform(action);
    return true;
  }

  private perform(action: CommandAction): void {
    switch (action.type) {
      case "run":
        return this.intents.runCells(action.cellIds);
      case "insert-cell":
        return this.intents.insertCell(action.index, action.kind, action.cellId);
      case "delete-cell":
        return this.intents.deleteCell(action.cellId);
      case "undo-delete":
        return this.intents.undoDelete();
      case "open":
        return action.panel === "toggle-toc" ? this.toggleToc() : this.setPanel(action.panel);
      case "set-kind":
        return this.intents.setKind(action.cellId, action.kind);
      case "interrupt":
        return this.intents.interrupt();
      case "restart":
        return this.intents.requestRestart();
    }
  }
}

/** What an intent needs: the need of the op it sends; null: it sends none. */
export function actionNeed(action: CommandAction): AccessNeed | null {
  switch (action.type) {
    case "open":
      return null;
    case "undo-delete":
      return needOf("insert-cell");
    case "run":
      return needOf("execute");
    case "interrupt":
    case "restart":
    case "insert-cell":
    case "delete-cell":
    case "set-kind":
      return needOf(action.type);
  }
}

function now(): number {
  return typeof performance !== "undefined" ? performance.now() : Date.now();
}
