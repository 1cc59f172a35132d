/**
 * Monaco's editor worker (word suggestions, link detection, diffs), bundled
 * as its own chunk so it is served from this origin. Loaded by
 * `MonacoEnvironment.getWorker` in monaco-setup.ts.
 */
import "monaco-editor/editor/editor.worker";
