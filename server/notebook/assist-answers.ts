/**
 * Tab completion and Shift+Tab inspection in a cell's editor, answered by
 * the kernel: never starts a kernel, never waits behind a running cell, and
 * converts offsets between the editor's UTF-16 and Python's code points.
 * Separate from the runtime because it reads the kernel and changes nothing.
 */
import { toCodePoints, toUtf16, type CompletionAnswer, type InspectionAnswer } from "../core/protocol/assist-model";
import type { KernelSession } from "../kernel/kernel-session";

export type AssistKernel = Pick<KernelSession, "status" | "complete" | "inspect">;

const NO_ANSWER: { status: "unavailable"; reason: string } = { status: "unavailable", reason: "the kernel did not answer in time" };

export async function completeIn(kernel: AssistKernel, code: string, cursor: number): Promise<CompletionAnswer> {
  const unavailable = assistUnavailable(kernel);
  if (unavailable !== null) return unavailable;
  const reply = await kernel.complete(code, toCodePoints(code, cursor));
  if (reply === null) return NO_ANSWER;
  return { status: "ok", matches: reply.matches, from: toUtf16(code, reply.cursorStart), to: toUtf16(code, reply.cursorEnd) };
}

export async function inspectIn(kernel: AssistKernel, code: string, cursor: number, detail: boolean): Promise<InspectionAnswer> {
  const unavailable = assistUnavailable(kernel);
  if (unavailable !== null) return unavailable;
  const reply = await kernel.inspect(code, toCodePoints(code, cursor), detail);
  if (reply === null) return NO_ANSWER;
  return { status: "ok", found: reply.found, text: reply.text };
}

function assistUnavailable(kernel: AssistKernel): { status: "unavailable"; reason: string } | null {
  const state = kernel.status.state;
  if (state === "idle") return null;
  return { status: "unavailable", reason: state === "busy" || state === "interrupting" ? "the kernel is running a cell" : `the kernel is ${state}` };
}
