/**
 * Where the wire protocols are defined, and where their generated Python halves
 * live: the generator command and its tests read these, nothing else does.
 * Two protocols share the generator: the kernel's (server ⇄ kernel over a PTY)
 * and the host agent's (lab server ⇄ host agent over a PTY link).
 */
import path from "node:path";
import { renderPythonProtocol, type RenderOptions } from "./kernel-protocol-python";

export const REPO_ROOT = path.resolve(__dirname, "..");
export const GENERATOR = "scripts/generate-kernel-protocol.ts";

export interface ProtocolTarget {
  /** What `--protocol` names it by. */
  name: "kernel" | "agent";
  /** The one definition (repository-relative). */
  source: string;
  /** The Python module generated from it, checked in (repository-relative). */
  python: string;
  messagesExport: string;
  requestsExport: string;
  naming: RenderOptions["naming"];
}

export const KERNEL_PROTOCOL: ProtocolTarget = {
  name: "kernel",
  source: "server/core/protocol/kernel-messages.ts",
  python: "kernels/mgpulab_wire/protocol_generated.py",
  messagesExport: "kernelMessageSchema",
  requestsExport: "kernelRequestSchema",
  naming: "Kernel",
};

export const AGENT_PROTOCOL: ProtocolTarget = {
  name: "agent",
  source: "server/core/protocol/agent-messages.ts",
  python: "kernels/mgpulab_wire/agent_protocol_generated.py",
  messagesExport: "agentMessageSchema",
  requestsExport: "agentRequestSchema",
  naming: "Agent",
};

export const PROTOCOL_TARGETS: readonly ProtocolTarget[] = [KERNEL_PROTOCOL, AGENT_PROTOCOL];

/** The kernel protocol's definition and Python module (kept under these names for the tests that pin them). */
export const PROTOCOL_SOURCE = KERNEL_PROTOCOL.source;
export const PYTHON_PROTOCOL = KERNEL_PROTOCOL.python;

/** A protocol module's exports (schemas, constants), loaded at run time from its source. */
export async function loadProtocolModule(target: ProtocolTarget = KERNEL_PROTOCOL): Promise<Record<string, unknown>> {
  const loaded: unknown = await import(path.join(REPO_ROOT, target.source));
  if (typeof loaded !== "object" || loaded === null) throw new Error(`${target.source} did not load as a module`);
  return { ...loaded };
}

/** The text the target's Python module must have. */
export async function renderPythonFromSource(target: ProtocolTarget = KERNEL_PROTOCOL): Promise<string> {
  return renderPythonProtocol(await loadProtocolModule(target), {
    source: target.source,
    generator: GENERATOR,
    messagesExport: target.messagesExport,
    requestsExport: target.requestsExport,
    naming: target.naming,
  });
}
