/**
 * The page's record of how its session ended, and what a watched socket does
 * when the server ends it: stops reconnecting, disconnects, tells its owner,
 * and the banner's watch learns why (once).
 */
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, it } from "node:test";
import type { SessionEndReason } from "../../server/core/protocol/accounts-model";
import { isUnauthorizedError, parseSessionEnd, sessionEndWords, SessionWatch, watchSession, type SessionEnd, type WatchedSocket } from "../../components/shell/model/session-ended";

/** A socket.io client socket as far as watchSession uses it: events in, reconnection and disconnect out. */
class FakeSocket extends EventEmitter implements WatchedSocket {
  reconnecting = true;
  disconnected = 0;
  readonly io = { reconnection: (enabled: boolean) => (this.reconnecting = enabled) };

  disconnect(): void {
    this.disconnected += 1;
  }

  serverEnds(reason: SessionEndReason): void {
    this.emit("session:ended", reason);
  }

  connectFails(message: string): void {
    this.emit("connect_error", new Error(message));
  }
}

function watched(): { socket: FakeSocket; watch: SessionWatch; told: SessionEnd[] } {
  const socket = new FakeSocket();
  const watch = new SessionWatch();
  const told: SessionEnd[] = [];
  watchSession(socket, (reason) => told.push(reason), watch);
  return { socket, watch, told };
}

describe("session ended", () => {
  it("says each reason in words", () => {
    const reasons: SessionEnd[] = ["signed-out", "expired", "removed", "revoked", "unauthorized"];
    const words = reasons.map(sessionEndWords);
    assert.equal(new Set(words).size, reasons.length);
    assert.equal(sessionEndWords("expired"), "your session expired");
  });

  it("reads an unknown reason off the wire as a session the server no longer accepts", () => {
    assert.equal(parseSessionEnd("removed"), "removed");
    assert.equal(parseSessionEnd("gone-fishing"), "unauthorized");
    assert.equal(parseSessionEnd(42), "unauthorized");
  });

  it("tells a refused handshake from a network failure", () => {
    assert.equal(isUnauthorizedError("unauthorized: sign in to use this lab"), true);
    assert.equal(isUnauthorizedError("xhr poll error"), false);
    assert.equal(isUnauthorizedError("timeout"), false);
  });

  it("stops a socket whose session the server ended, and records why once", () => {
    const { socket, watch, told } = watched();
    const seen: Array<SessionEnd | null> = [];
    watch.subscribe(() => seen.push(watch.getState()));
    socket.serverEnds("expired");
    assert.equal(socket.reconnecting, false);
    assert.equal(socket.disconnected, 1);
    assert.deepEqual(told, ["expired"]);
    assert.equal(watch.getState(), "expired");
    socket.serverEnds("removed");
    assert.equal(watch.getState(), "expired", "the first end counts");
    assert.deepEqual(seen, ["expired"]);
  });

  it("stops on an unauthorized connect_error, and keeps retrying any other", () => {
    const { socket, watch, told } = watched();
    socket.connectFails("websocket error");
    assert.equal(socket.reconnecting, true);
    assert.equal(watch.getState(), null);
    socket.connectFails("unauthorized: sign in to use this lab");
    assert.equal(socket.reconnecting, false);
    assert.deepEqual(told, ["unauthorized"]);
    assert.equal(watch.getState(), "unauthorized");
  });

  it("shows no banner for a sign-out this tab asked for, but does after one that failed", () => {
    const { socket, watch } = watched();
    watch.leave();
    socket.serverEnds("signed-out");
    assert.equal(watch.getState(), null);
    assert.equal(watch.over, true);
    watch.stay();
    const other = new FakeSocket();
    watchSession(other, () => {}, watch);
    other.serverEnds("revoked");
    assert.equal(watch.getState(), "revoked");
  });

  it("reloads instead of the banner when this tab's own password change ends its session", () => {
    const reloads: number[] = [];
    const watch = new SessionWatch(() => reloads.push(1));
    const socket = new FakeSocket();
    const other = new FakeSocket();
    watchSession(socket, () => {}, watch);
    watchSession(other, () => {}, watch);
    watch.expectRenewal();
    watch.renewed();
    assert.equal(watch.over, false, "the page goes on until the old session ends");
    socket.serverEnds("revoked");
    other.serverEnds("revoked");
    assert.equal(watch.getState(), null, "no banner");
    assert.equal(reloads.length, 1, "one reload for both sockets");
    assert.equal(watch.over, true);
  });

  it("waits for the change's answer when the old session ends before it", () => {
    const reloads: number[] = [];
    const watch = new SessionWatch(() => reloads.push(1));
    watch.expectRenewal();
    watch.end("revoked");
    assert.equal(reloads.length, 0, "the browser does not hold the new cookie yet");
    assert.equal(watch.getState(), null);
    watch.renewed();
    assert.equal(reloads.length, 1);
  });

  it("shows the banner after all when the change was refused", () => {
    const reloads: number[] = [];
    const watch = new SessionWatch(() => reloads.push(1));
    watch.expectRenewal();
    watch.end("expired");
    watch.renewalFailed();
    assert.equal(watch.getState(), "expired");
    const later = new SessionWatch(() => reloads.push(1));
    later.expectRenewal();
    later.renewalFailed();
    later.end("removed");
    assert.equal(later.getState(), "removed");
    assert.equal(reloads.length, 0);
  });
});
