/** The socket under the notebook: connects, reconnects after the server closed it on purpose, follows the browser's network, closes for good. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SocketLink, type ConnectionState } from "../../components/notebook/model/socket-link";
import { BareSocketServer } from "../helpers/bare-socket-server";
import { pollUntil } from "../helpers/daemons";

function setup(server: BareSocketServer) {
  const states: ConnectionState["status"][] = [];
  let connects = 0;
  let downs = 0;
  let listened = 0;
  const link = new SocketLink(
    {
      connected: () => connects++,
      down: () => downs++,
      state: (state) => states.push(state.status),
      listen: () => listened++,
    },
    () => server.client(false),
  );
  return { link, states, connects: () => connects, downs: () => downs, listened: () => listened };
}

describe("SocketLink", () => {
  let server: BareSocketServer;
  before(async () => {
    server = await BareSocketServer.start();
  });
  after(() => server.close());

  it("connects once started (twice is once), and connects again after the server closed the socket on purpose", async () => {
    const { link, connects, downs, listened, states } = setup(server);
    link.start();
    link.start();
    await pollUntil("connected", () => connects() === 1, 5_000, 10);
    assert.equal(listened(), 1);
    server.sockets.at(-1)?.disconnect(true);
    await pollUntil("connected again", () => connects() === 2, 5_000, 10);
    assert.equal(downs(), 1);
    assert.ok(states.includes("reconnecting"));
    link.end({ status: "signed-out", reason: "you were signed out" });
    assert.equal(link.state.status, "signed-out");
    assert.equal(link.socket, null);
  });

  it("follows the browser's network, and stays put once the session is over", async () => {
    const { link, connects } = setup(server);
    link.start();
    await pollUntil("connected", () => connects() === 1, 5_000, 10);
    link.setBrowserOnline(false);
    assert.deepEqual(link.state, { status: "offline", reason: "this browser is offline" });
    link.setBrowserOnline(true);
    assert.deepEqual(link.state, { status: "reconnecting", attempt: 0, lastError: null });
    link.end({ status: "not-found", reason: "no notebook nb" });
    link.setBrowserOnline(false);
    assert.equal(link.state.status, "not-found");
  });
});
