/**
 * The notebook list's link to the server: `lab:command` over its own
 * socket (acknowledged, with a time limit), and the HTTP import route for
 * .ipynb files, whose answers are parsed with a schema, never trusted.
 */
import { io } from "socket.io-client";
import { z } from "zod";
import { MAX_TITLE_CHARS } from "../../../server/core/limits";
import { NOTEBOOK_IMPORT_PATH, type ServerToClientEvents } from "../../../server/core/protocol/socket-api";
import type { LabAnswer, LabOp, LabSend } from "../../../server/core/protocol/ops-lab";
import { readJson } from "./read-json";
import { emitLab, type NotebookSocket } from "./socket-rpc";
import { watchSession } from "./session-ended";

/** Where list commands go; the socket below in the app, anything that answers like the server in tests. */
export interface LabTransport {
  /** Resolves with the op's own answer (its reply, checked against the op's reply schema, or a refusal). */
  send<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>>;
  /** Called after every (re)connect, so a list shown across a server restart can reload. */
  onConnect(listener: () => void): void;
  close(): void;
}

/** The live lab events a page may follow, after the command that subscribes it (`workshop-console`, `my-workshop`). */
export type LabEventName = Extract<keyof ServerToClientEvents, `workshop:${string}`>;
/** An event with its own listener's type (a union of pairs, so the two narrow together). */
export type LabEventArgs = { [E in LabEventName]: [event: E, listener: ServerToClientEvents[E]] }[LabEventName];

/** A transport that also delivers live lab events; `on` returns the way to stop listening. */
export interface LiveLabTransport extends LabTransport {
  on(...args: LabEventArgs): () => void;
}

export class SocketLabTransport implements LiveLabTransport {
  private readonly socket: NotebookSocket;

  constructor(createSocket: () => NotebookSocket = () => io({ transports: ["websocket"], reconnectionDelay: 500, reconnectionDelayMax: 5_000 }), private readonly ackTimeoutMs = 15_000) {
    this.socket = createSocket();
    // A session that ends (or a handshake refused for want of one) stops this socket and shows the page's banner.
    watchSession(this.socket);
  }

  send<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
    // Sent at once when connected, else buffered by socket.io until the (re)connect, within the time limit.
    return emitLab(this.socket, command, this.ackTimeoutMs);
  }

  onConnect(listener: () => void): void {
    this.socket.on("connect", listener);
  }

  on(...args: LabEventArgs): () => void {
    // Each event narrowed with its own listener: socket.io's typed `on` takes them one at a time.
    const [event, listener] = args;
    switch (event) {
      case "workshop:console":
        this.socket.on(event, listener);
        return () => void this.socket.off(event, listener);
      case "workshop:participant":
        this.socket.on(event, listener);
        return () => void this.socket.off(event, listener);
    }
  }

  close(): void {
    this.socket.removeAllListeners();
    this.socket.disconnect();
  }
}

/** `notes`: what did not survive the import as it was (cut outputs, cells imported detached…). */
export type ImportResult = { ok: true; id: string; notes: string[] } | { ok: false; error: string };

const importCreated = z.object({ id: z.string().min(1), notes: z.array(z.string()).default([]) });
const importRefused = z.object({ error: z.string() });

/** The title an imported file gets: its name without the extension. */
export function titleFromFileName(fileName: string): string {
  return fileName.replace(/\.ipynb$/i, "").trim().slice(0, MAX_TITLE_CHARS);
}

/** POST the raw .ipynb text to the import route; the server's own message on refusal. */
export async function importNotebook(text: string, fileName: string, fetchImpl: typeof fetch = fetch): Promise<ImportResult> {
  const title = titleFromFileName(fileName);
  const url = title === "" ? NOTEBOOK_IMPORT_PATH : `${NOTEBOOK_IMPORT_PATH}?title=${encodeURIComponent(title)}`;
  let response: Response;
  try {
    response = await fetchImpl(url, { method: "POST", body: text, headers: { "Content-Type": "application/x-ipynb+json" } });
  } catch (err) {
    if (err instanceof TypeError) return { ok: false, error: `could not reach the server (${err.message})` };
    throw err;
  }
  const body = await readJson(response);
  if (response.status === 201 || response.ok) {
    const created = importCreated.safeParse(body);
    return created.success ? { ok: true, id: created.data.id, notes: created.data.notes } : { ok: false, error: "the server accepted the file but sent no notebook id" };
  }
  const refused = importRefused.safeParse(body);
  return { ok: false, error: refused.success ? refused.data.error : `the server answered ${response.status} ${response.statusText}`.trim() };
}

/** Where the import's notes wait for the notebook page that shows them (this tab only). */
export function importNotesKey(notebookId: string): string {
  return `mgpulab:import-notes:${notebookId}`;
}

const storedNotes = z.array(z.string()).max(10_000);

/** The notes an import left for this notebook, read once (null when there are none or they are unreadable). */
export function takeImportNotes(storage: Pick<Storage, "getItem" | "removeItem">, notebookId: string): string[] | null {
  const raw = storage.getItem(importNotesKey(notebookId));
  if (raw === null) return null;
  storage.removeItem(importNotesKey(notebookId));
  try {
    const parsed = storedNotes.safeParse(JSON.parse(raw));
    return parsed.success && parsed.data.length > 0 ? parsed.data : null;
  } catch (err) {
    if (err instanceof SyntaxError) return null;
    throw err;
  }
}
