/**
 * Kernel completion (Tab) and inspection (Shift+Tab) in Monaco.
 *
 * Monaco's providers are global per language, so one completion provider and
 * one hover provider serve every cell; each editor registers its model with
 * the assist to ask. When the kernel cannot answer (busy, offline, slow, or a
 * viewer who may not run it), the completion provider returns nothing and
 * Monaco asks its next provider group: the word-based completion the editors
 * had before. The hover provider answers only right after Shift+Tab, so
 * moving the mouse never asks the kernel anything.
 *
 * Browser-only, like monaco-setup.ts.
 */
import { monaco } from "./monaco-setup";
import { completionIcon, inspectionMarkdown, tabCompletes, type CompletionIcon, type KernelAssist } from "./model/kernel-assist";

const assists = new Map<string, () => KernelAssist | null>();
/** The model whose Shift+Tab is waiting for its hover, and where. */
let inspecting: { uri: string; offset: number } | null = null;
let registered = false;

const KINDS: Record<CompletionIcon, monaco.languages.CompletionItemKind> = {
  function: monaco.languages.CompletionItemKind.Function,
  module: monaco.languages.CompletionItemKind.Module,
  class: monaco.languages.CompletionItemKind.Class,
  keyword: monaco.languages.CompletionItemKind.Keyword,
  property: monaco.languages.CompletionItemKind.Property,
  variable: monaco.languages.CompletionItemKind.Variable,
  file: monaco.languages.CompletionItemKind.File,
};

function registerProviders(): void {
  if (registered) return;
  registered = true;
  monaco.languages.registerCompletionItemProvider("python", {
    triggerCharacters: ["."],
    async provideCompletionItems(model, position) {
      const assist = assists.get(model.uri.toString())?.();
      if (!assist) return undefined;
      const code = model.getValue();
      const answer = await assist.complete(code, model.getOffsetAt(position));
      if (answer.status !== "ok" || answer.matches.length === 0 || model.isDisposed()) return undefined;
      const start = model.getPositionAt(answer.from);
      const end = model.getPositionAt(Math.max(answer.to, model.getOffsetAt(position)));
      if (start.lineNumber !== position.lineNumber || end.lineNumber !== position.lineNumber) return undefined;
      const range = new monaco.Range(start.lineNumber, start.column, end.lineNumber, end.column);
      return {
        suggestions: answer.matches.map((match, i) => ({
          label: match.text,
          kind: KINDS[completionIcon(match.type)],
          detail: match.type,
          insertText: match.text,
          range,
          // The kernel's order (jedi ranks by relevance), not Monaco's alphabetical one.
          sortText: String(i).padStart(5, "0"),
        })),
      };
    },
  });
  monaco.languages.registerHoverProvider("python", {
    async provideHover(model, position) {
      const asked = inspecting;
      if (asked === null || asked.uri !== model.uri.toString()) return undefined;
      inspecting = null;
      const assist = assists.get(asked.uri)?.();
      if (!assist) return undefined;
      const answer = await assist.inspect(model.getValue(), asked.offset);
      if (answer.status !== "ok" || !answer.found) {
        const why = answer.status === "ok" ? "The kernel knows nothing by this name (run the cell that defines it first)." : `No help from the kernel: ${answer.reason}.`;
        return { contents: [{ value: why }], range: new monaco.Range(position.lineNumber, position.column, position.lineNumber, position.column) };
      }
      return { contents: [{ value: inspectionMarkdown(answer.text) }], range: new monaco.Range(position.lineNumber, position.column, position.lineNumber, position.column) };
    },
  });
}

/** Tab and Shift+Tab of one editor ask `assist()` (null: this viewer may not ask; Tab indents and completes words only). */
export function attachKernelAssist(editor: monaco.editor.IStandaloneCodeEditor, assist: () => KernelAssist | null): monaco.IDisposable {
  registerProviders();
  const model = editor.getModel();
  if (model === null) return { dispose: () => undefined };
  const uri = model.uri.toString();
  assists.set(uri, assist);
  const lineBefore = (): string => {
    const position = editor.getPosition();
    if (position === null) return "";
    return model.getValueInRange(new monaco.Range(position.lineNumber, 1, position.lineNumber, position.column));
  };
  const noWidget = "editorTextFocus && !suggestWidgetVisible && !inSnippetMode && !editorHasSelection && !editorHasMultipleSelections && !editorReadonly";
  const actions = [
    editor.addAction({
      id: "mgpulab.complete",
      label: "Complete from the kernel",
      keybindings: [monaco.KeyCode.Tab],
      precondition: noWidget,
      run: () => {
        if (tabCompletes(lineBefore())) editor.trigger("kernel-assist", "editor.action.triggerSuggest", {});
        else editor.trigger("keyboard", "tab", null);
      },
    }),
    editor.addAction({
      id: "mgpulab.inspect",
      label: "Show signature and docstring",
      keybindings: [monaco.KeyMod.Shift | monaco.KeyCode.Tab],
      precondition: "editorTextFocus && !suggestWidgetVisible && !inSnippetMode && !editorHasSelection",
      run: () => {
        const position = editor.getPosition();
        if (position === null || !/[\w.(,= ]$/.test(lineBefore()) || lineBefore().trim() === "") {
          editor.trigger("keyboard", "outdent", null);
          return;
        }
        inspecting = { uri, offset: model.getOffsetAt(position) };
        editor.trigger("kernel-assist", "editor.action.showHover", { focus: false });
      },
    }),
  ];
  return {
    dispose: () => {
      for (const action of actions) action.dispose();
      if (assists.get(uri) === assist) assists.delete(uri);
    },
  };
}
