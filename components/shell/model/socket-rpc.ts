/**
 * One request over the notebook socket and its answer: the op's own reply
 * (checked against the op table's reply schema), the server's refusal, or
 * the fact that no answer came (not connected, timed out, link dropped).
 * Separate from the connection's state machine: every sender (source edits,
 * the outbox, runs, lab ops, the kernel's assist) asks the same way.
 */
import type { ErrorCode } from "../../../server/core/errors";
import { labAnswerOf, type LabAnswer, type LabOp, type LabSend } from "../../../server/core/protocol/ops-lab";
import { notebookAnswerOf, type NotebookAnswer, type NotebookOp, type NotebookSend } from "../../../server/core/protocol/ops-notebook";
import { messageTooLarge, type ClientToServerEvents, type ServerToClientEvents } from "../../../server/core/protocol/socket-api";
import type { Socket } from "socket.io-client";

export type NotebookSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

/** No answer came (not connected, timed out, link dropped). */
export type Lost = { ok: false; error: string; code: "unavailable"; lost: true };
/** A command's answer, or the fact that none came. */
export type Reply<Op extends NotebookOp> = NotebookAnswer<Op> | Lost;
/** A failure this end reports itself, in the shape of the server's. */
export type Failure = { ok: false; error: string; code: ErrorCode };

export const NOT_CONNECTED = "not connected to the server";
export const NO_ANSWER = "no answer from the server (timed out or disconnected)";

export const isLost = <Op extends NotebookOp>(reply: Reply<Op>): reply is Lost => "lost" in reply;

/** The answer as the caller sees it: no answer is a refusal "unavailable". */
export function answerOf<Op extends NotebookOp>(reply: Reply<Op>): NotebookAnswer<Op> {
  return isLost(reply) ? { ok: false, error: reply.error, code: reply.code } : reply;
}

/** Sends a notebook command; resolves with its op's own answer, or that none came within `timeoutMs`. */
export function requestNotebook<Op extends NotebookOp>(socket: NotebookSocket | null, command: NotebookSend<Op>, timeoutMs: number): Promise<Reply<Op>> {
  if (socket === null || !socket.connected) return Promise.resolve({ ok: false, error: NOT_CONNECTED, code: "unavailable", lost: true });
  // Past the transport's cap the server would close the connection: refuse here, with the reason.
  const tooLarge = messageTooLarge(command);
  if (tooLarge !== null) return Promise.resolve({ ok: false, error: tooLarge, code: "too-large" });
  return new Promise((resolve) => {
    socket.timeout(timeoutMs).emit("notebook:command", command, (err: Error | null, reply: unknown) => {
      resolve(err !== null ? { ok: false, error: NO_ANSWER, code: "unavailable", lost: true } : notebookAnswerOf<Op>(command.op, reply));
    });
  });
}

/** A notebook-list command (rename, restore…) over the same socket; resolves with the op's own answer ("unavailable" when none came). */
export function requestLab<Op extends LabOp>(socket: NotebookSocket | null, command: LabSend<Op>, timeoutMs: number): Promise<LabAnswer<Op>> {
  if (socket === null || !socket.connected) return Promise.resolve({ ok: false, error: NOT_CONNECTED, code: "unavailable" });
  return emitLab(socket, command, timeoutMs);
}

/** The same without asking whether the socket is up: socket.io buffers it until the (re)connect, within the time limit. */
export function emitLab<Op extends LabOp>(socket: NotebookSocket, command: LabSend<Op>, timeoutMs: number): Promise<LabAnswer<Op>> {
  return new Promise((resolve) => {
    socket.timeout(timeoutMs).emit("lab:command", command, (err: Error | null, reply: unknown) => {
      resolve(err !== null ? { ok: false, error: NO_ANSWER, code: "unavailable" } : labAnswerOf<Op>(command.op, reply));
    });
  });
}
