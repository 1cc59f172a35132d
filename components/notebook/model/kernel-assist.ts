/**
 * What an editor may ask the kernel (Tab completion, Shift+Tab inspection),
 * and the editor-independent parts of answering: when Tab means "complete"
 * rather than "indent", how a completion kind maps to an icon, and how an
 * inspection's text becomes a markdown code block. Pure: tested without Monaco.
 */
import type { CompletionAnswer, InspectionAnswer } from "../../../server/core/protocol/assist-model";

export interface KernelAssist {
  /** `cursor`: a UTF-16 offset into `code`, as the editor counts. */
  complete(code: string, cursor: number): Promise<CompletionAnswer>;
  inspect(code: string, cursor: number): Promise<InspectionAnswer>;
}

/** Tab completes after a name, a dot or a magic's `%`; at the start of a line or after a space it indents, as in Jupyter. */
export function tabCompletes(lineBeforeCursor: string): boolean {
  return /[\w.%]$/.test(lineBeforeCursor);
}

export type CompletionIcon = "function" | "module" | "class" | "keyword" | "property" | "variable" | "file";

export function completionIcon(type: string): CompletionIcon {
  switch (type) {
    case "function":
      return "function";
    case "module":
      return "module";
    case "class":
      return "class";
    case "keyword":
    case "magic":
      return "keyword";
    case "property":
      return "property";
    case "path":
      return "file";
    default:
      return "variable";
  }
}

/** Inspection text as a fenced block, the fence longer than any run of backticks inside it. */
export function inspectionMarkdown(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}text\n${text}\n${fence}`;
}
