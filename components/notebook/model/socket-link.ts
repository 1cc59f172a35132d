/**
 * The socket itself and what the page says about it: created (WebSocket
 * only), reconnected by socket.io or by us when the server closed it on
 * purpose, told by the browser when the network goes and comes back, and
 * closed for good when the session ends. Its state is one union the header
 * shows. Separate from the notebook on top of it: this knows nothing of
 * opening a notebook, only when the link is up.
 */
import { io, type ManagerOptions, type SocketOptions } from "socket.io-client";
import { sessionEndWords, watchSession } from "../../shell/model/session-ended";
import type { NotebookSocket } from "../../shell/model/socket-rpc";

export type ConnectionState =
  | { status: "connecting" }
  | { status: "connected"; socketId: string }
  | { status: "reconnecting"; attempt: number; lastError: string | null }
  | { status: "offline"; reason: string }
  /** The server has no such notebook: nothing to retry. */
  | { status: "not-found"; reason: string }
  /** The session ended (signed out, expired, removed): nothing to retry until the user signs in again. */
  | { status: "signed-out"; reason: string };

/** What a socket.io disconnect reason means for us. */
export type DisconnectPolicy = "auto-reconnect" | "reconnect-ourselves" | "closed";

export function classifyDisconnect(reason: string): DisconnectPolicy {
  switch (reason) {
    case "io client disconnect":
      return "closed";
    // The server closed the socket on purpose (e.g. it restarted): socket.io
    // does not reconnect by itself after this one.
    case "io server disconnect":
      return "reconnect-ourselves";
    default:
      // "transport close", "transport error", "ping timeout", "parse error"
      return "auto-reconnect";
  }
}

/** How the notebook page's socket connects and reconnects (the chaos run's participants connect the same way). */
export const NOTEBOOK_SOCKET_OPTIONS = {
  // WebSocket only, as the server allows: behind a load balancer each connection stays on one lab server.
  transports: ["websocket"],
  autoConnect: false,
  reconnection: true,
  reconnectionDelay: 500,
  reconnectionDelayMax: 5_000,
  randomizationFactor: 0.5,
  timeout: 10_000,
} satisfies Partial<ManagerOptions & SocketOptions>;

export interface LinkHooks {
  /** The socket (re)connected: open what rides on it. */
  connected(socket: NotebookSocket): void;
  /** The link dropped or closed: nothing rides on it until `connected` again. */
  down(): void;
  state(state: ConnectionState): void;
  /** Listeners of what rides on the socket, added once when it is created. */
  listen(socket: NotebookSocket): void;
}

export class SocketLink {
  private current: ConnectionState = { status: "connecting" };
  private live: NotebookSocket | null = null;
  private connectError: string | null = null;

  constructor(
    private readonly hooks: LinkHooks,
    private readonly createSocket?: () => NotebookSocket,
  ) {}

  get state(): ConnectionState {
    return this.current;
  }

  get socket(): NotebookSocket | null {
    return this.live;
  }

  start(): void {
    if (this.live !== null) return;
    const socket = this.createSocket?.() ?? io(NOTEBOOK_SOCKET_OPTIONS);
    this.live = socket;
    socket.on("connect", () => this.hooks.connected(socket));
    socket.on("disconnect", (reason) => this.onDisconnect(reason));
    socket.on("connect_error", (err) => this.onConnectError(err));
    socket.io.on("reconnect_attempt", this.onReconnectAttempt);
    watchSession(socket, (reason) => this.end({ status: "signed-out", reason: sessionEndWords(reason) }));
    this.hooks.listen(socket);
    socket.connect();
  }

  /** The browser says the network is gone / back (window offline/online events). */
  setBrowserOnline(online: boolean): void {
    if (this.current.status === "not-found" || this.current.status === "signed-out") return;
    if (!online) {
      this.setState({ status: "offline", reason: "this browser is offline" });
    } else if (this.current.status === "offline" && this.live !== null) {
      this.setState({ status: "reconnecting", attempt: 0, lastError: null });
      if (!this.live.connected) this.live.connect();
    }
  }

  setState(state: ConnectionState): void {
    this.current = state;
    this.hooks.state(state);
  }

  /** Closes the socket for good; with a state, says why (the session ended, no such notebook). */
  end(state?: Extract<ConnectionState, { status: "not-found" | "signed-out" }>): void {
    this.hooks.down();
    this.live?.removeAllListeners();
    this.live?.io.off("reconnect_attempt", this.onReconnectAttempt);
    this.live?.disconnect();
    this.live = null;
    if (state !== undefined) this.setState(state);
  }

  private onDisconnect(reason: string): void {
    const policy = classifyDisconnect(reason);
    this.hooks.down();
    if (policy === "closed") return;
    if (this.current.status !== "offline") {
      this.setState({ status: "reconnecting", attempt: 0, lastError: reason });
    }
    if (policy === "reconnect-ourselves") {
      const socket = this.live;
      setTimeout(() => {
        if (this.live === socket && socket !== null && !socket.connected) socket.connect();
      }, 500 + Math.random() * 1000);
    }
  }

  private readonly onReconnectAttempt = (attempt: number): void => {
    if (this.current.status !== "offline") {
      this.setState({ status: "reconnecting", attempt, lastError: this.connectError });
    }
  };

  private onConnectError(err: Error): void {
    this.connectError = err.message;
    if (this.current.status === "reconnecting") {
      this.setState({ ...this.current, lastError: err.message });
    }
  }
}
