/**
 * Where the kernel protocol is defined, and where its generated Python half
 * lives: the generator command and its tests read these, nothing else does.
 */
import path from "node:path";
import { renderPythonProtocol } from "./kernel-protocol-python";

export const REPO_ROOT = path.resolve(__dirname, "..");
/** The one definition of the kernel protocol (repository-relative). */
export const PROTOCOL_SOURCE = "server/core/protocol/kernel-messages.ts";
/** The Python module generated from it, checked in. */
export const PYTHON_PROTOCOL = "kernels/mgpulab_wire/protocol_generated.py";
export const GENERATOR = "scripts/generate-kernel-protocol.ts";

/** The protocol module's exports (schemas, constants), loaded at run time from PROTOCOL_SOURCE. */
export async function loadProtocolModule(): Promise<Record<string, unknown>> {
  const loaded: unknown = await import(path.join(REPO_ROOT, PROTOCOL_SOURCE));
  if (typeof loaded !== "object" || loaded === null) throw new Error(`${PROTOCOL_SOURCE} did not load as a module`);
  return { ...loaded };
}

/** The text PYTHON_PROTOCOL must have. */
export async function renderPythonFromSource(): Promise<string> {
  return renderPythonProtocol(await loadProtocolModule(), {
    source: PROTOCOL_SOURCE,
    generator: GENERATOR,
    messagesExport: "kernelMessageSchema",
    requestsExport: "kernelRequestSchema",
  });
}
