"use client";
/**
 * Monaco for one cell: grows with its content like a Jupyter cell, minimal
 * chrome, and the notebook's run keys (Shift/Ctrl/Alt+Enter) and Escape bound
 * per editor (addAction, not addCommand: commands are global to all editors).
 * Loaded only through next/dynamic with ssr: false (see CodeEditor).
 *
 * The editor owns its text; a new `value` from outside (another tab's edit,
 * "use theirs") is applied as the smallest replacement, so the cursor stays
 * where the user left it unless the change reaches it. Values that are only
 * our own typing coming back (perhaps a few keystrokes late) are ignored.
 */
import Editor, { type OnMount } from "@monaco-editor/react";
import { useEffect, useMemo, useRef, useState } from "react";
import { monaco } from "./monaco-setup";
import { attachKernelAssist } from "./monaco-kernel-assist";
import EditorFallback from "./EditorFallback";
import type { CodeEditorProps } from "./code-editor-props";
import type { KeyInput } from "./model/command-mode";
import { EditorEchoes, minimalReplacement } from "./model/text-diff";
import { useEditorTheme } from "../shell/use-theme";

const LINE_HEIGHT = 19;
const PADDING = 6;

const OPTIONS: monaco.editor.IStandaloneEditorConstructionOptions = {
  minimap: { enabled: false },
  lineNumbers: "off",
  glyphMargin: false,
  folding: false,
  lineDecorationsWidth: 8,
  lineNumbersMinChars: 0,
  renderLineHighlight: "none",
  scrollBeyondLastLine: false,
  scrollbar: {
    vertical: "hidden",
    horizontal: "auto",
    horizontalScrollbarSize: 8,
    alwaysConsumeMouseWheel: false,
    useShadows: false,
  },
  overviewRulerLanes: 0,
  overviewRulerBorder: false,
  hideCursorInOverviewRuler: true,
  stickyScroll: { enabled: false },
  guides: { indentation: false },
  renderWhitespace: "none",
  fontSize: 13,
  lineHeight: LINE_HEIGHT,
  fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', 'Liberation Mono', monospace",
  padding: { top: PADDING, bottom: PADDING },
  tabSize: 4,
  insertSpaces: true,
  detectIndentation: false,
  automaticLayout: true,
  fixedOverflowWidgets: true,
  quickSuggestions: false,
  suggestOnTriggerCharacters: false,
  wordBasedSuggestions: "currentDocument",
  contextmenu: false,
  links: false,
};

/** Escape leaves edit mode only when no editor widget wants it first. */
const ESCAPE_WHEN =
  "!suggestWidgetVisible && !findWidgetVisible && !parameterHintsVisible && !editorHasMultipleSelections && !inSnippetMode && !renameInputVisible";

export default function MonacoEditor(props: CodeEditorProps) {
  const [height, setHeight] = useState(() => estimateHeight(props.value));
  const editorRef = useRef<monaco.editor.IStandaloneCodeEditor | null>(null);
  const [echoes] = useState(() => new EditorEchoes());
  /** True while this component writes an external value into the editor (not the user typing). */
  const applying = useRef(false);
  const latest = useRef(props);
  useEffect(() => {
    latest.current = props;
  });

  const onMount: OnMount = (editor) => {
    editorRef.current = editor;
    applyExternal(editor, latest.current.value);
    setHeight(editor.getContentHeight());
    editor.onDidContentSizeChange((e) => {
      if (e.contentHeightChanged) setHeight(e.contentHeight);
    });
    editor.onDidFocusEditorText(() => latest.current.onFocus());
    // The editor grows instead of scrolling, so the page must follow the cursor (typing at the bottom of a cell).
    editor.onDidChangeCursorPosition(() => {
      if (editor.hasTextFocus()) keepCursorInView(editor);
    });
    editor.onDidBlurEditorText(() => latest.current.onBlur());
    const { KeyCode, KeyMod } = monaco;
    const bind = (id: string, label: string, keybindings: number[], key: Omit<KeyInput, "at">, precondition?: string) => {
      editor.addAction({
        id: `mgpulab.${id}`,
        label,
        keybindings,
        ...(precondition === undefined ? {} : { precondition }),
        run: () => latest.current.onKey({ ...key, at: performance.now() }),
      });
    };
    const enter = { key: "Enter", shift: false, ctrl: false, alt: false, meta: false };
    bind("run-and-advance", "Run cell and select below", [KeyMod.Shift | KeyCode.Enter], { ...enter, shift: true });
    bind("run-in-place", "Run cell", [KeyMod.CtrlCmd | KeyCode.Enter, KeyMod.WinCtrl | KeyCode.Enter], { ...enter, ctrl: true });
    bind("run-and-insert", "Run cell and insert below", [KeyMod.Alt | KeyCode.Enter], { ...enter, alt: true });
    bind("command-mode", "Leave edit mode", [KeyCode.Escape], { ...enter, key: "Escape" }, ESCAPE_WHEN);
    if (latest.current.language === "python") {
      const attached = attachKernelAssist(editor, () => latest.current.assist ?? null);
      editor.onDidDispose(() => attached.dispose());
    }
    if (latest.current.focused) editor.focus();
  };

  useEffect(() => {
    const editor = editorRef.current;
    if (props.focused && editor !== null && !editor.hasTextFocus()) editor.focus();
  }, [props.focused]);

  const applyExternal = (editor: monaco.editor.IStandaloneCodeEditor, value: string) => {
    applying.current = true;
    try {
      applyExternalValue(editor, value);
    } finally {
      applying.current = false;
    }
  };

  useEffect(() => {
    const editor = editorRef.current;
    if (editor === null) return;
    const external = echoes.incoming(props.value);
    if (external !== null) applyExternal(editor, external);
  }, [props.value, echoes]);

  // A new options object makes the wrapper call updateOptions: keep it while nothing in it changes.
  const readOnly = props.readOnly === true;
  const options = useMemo(() => ({ ...OPTIONS, ariaLabel: props.ariaLabel, readOnly, domReadOnly: readOnly }), [props.ariaLabel, readOnly]);

  return (
    <Editor
      height={height}
      defaultValue={props.value}
      language={props.language}
      theme={useEditorTheme()}
      options={options}
      onChange={(value) => {
        if (applying.current) return;
        echoes.typed(value ?? "");
        props.onChange(value ?? "");
      }}
      onMount={onMount}
      loading={<EditorFallback source={props.value} />}
    />
  );
}

/** Scrolls the page (not the editor) just enough to show the cursor's line, after the editor has grown to hold it. */
function keepCursorInView(editor: monaco.editor.IStandaloneCodeEditor): void {
  requestAnimationFrame(() => {
    const position = editor.getPosition();
    const node = editor.getDomNode();
    if (position === null || node === null) return;
    const cursor = editor.getScrolledVisiblePosition(position);
    if (cursor === null) return;
    const top = node.getBoundingClientRect().top + cursor.top;
    const margin = 2 * LINE_HEIGHT;
    if (top + cursor.height + margin > window.innerHeight) window.scrollBy({ top: top + cursor.height + margin - window.innerHeight });
    else if (top - margin < 0) window.scrollBy({ top: top - margin });
  });
}

/** Make the editor show `value`, changing only the part that differs. */
function applyExternalValue(editor: monaco.editor.IStandaloneCodeEditor, value: string): void {
  const model = editor.getModel();
  if (model === null) return;
  const change = minimalReplacement(model.getValue(), value);
  if (change === null) return;
  const from = model.getPositionAt(change.start);
  const to = model.getPositionAt(change.end);
  // On the model, not the editor: a read-only editor (a cell rendered from its form) refuses executeEdits.
  model.pushStackElement();
  model.pushEditOperations(null, [{ range: new monaco.Range(from.lineNumber, from.column, to.lineNumber, to.column), text: change.text, forceMoveMarkers: false }], () => null);
  model.pushStackElement();
}

function estimateHeight(source: string): number {
  let lines = 1;
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) lines += 1;
  return lines * LINE_HEIGHT + 2 * PADDING;
}
