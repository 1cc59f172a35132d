/**
 * Monaco from the local `monaco-editor` package, never from a CDN.
 *
 * Browser-only: import it only from modules loaded through `next/dynamic`
 * with `ssr: false` (Monaco touches `window` at import time).
 *
 * Only the editor core, its features and the two languages cells use are
 * bundled (not the TypeScript/CSS/JSON/HTML language services), so the only
 * worker Monaco asks for is the editor worker.
 */
import * as monaco from "monaco-editor/editor/editor.api";
import "monaco-editor/features/register.all";
import "monaco-editor/languages/definitions/python/register";
import "monaco-editor/languages/definitions/markdown/register";
import { loader } from "@monaco-editor/react";

globalThis.MonacoEnvironment = {
  getWorker(_workerId: string, _label: string): Worker {
    // The literal `new Worker(new URL(…, import.meta.url))` form is what the
    // bundler (Turbopack or webpack) recognises and emits as a worker chunk.
    return new Worker(new URL("./monaco-editor.worker.ts", import.meta.url), { name: "monaco-editor-worker" });
  },
};

loader.config({ monaco });

export { monaco };
