/**
 * Requests between lab servers over a real Redis (server-link.ts): a reply
 * reaches its sender; a failure keeps its code; a server that is gone, or a
 * Redis that is away, is an "unavailable" error at once (not a wait for the
 * timeout); a forged message on a server's channel is ignored; a restarted
 * Redis is used again.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createClient } from "redis";
import { ServerLink } from "../../server/cluster/server-link";
import { CommandError } from "../../server/errors";
import { freePort, RedisService } from "../helpers/cluster-services";

describe("requests between lab servers", () => {
  let redis: RedisService;
  const links: ServerLink[] = [];
  const warnings: string[] = [];
  const open = async (serverId: string, labId = "lab1") => {
    const link = await ServerLink.open({ redisUrl: redis.url, labId, serverId, timeoutMs: 3_000, log: (_level, message) => warnings.push(message) });
    links.push(link);
    return link;
  };

  before(async () => {
    redis = await RedisService.start();
  });
  after(async () => {
    for (const link of links) await link.close();
    await redis.stop();
  });

  it("a Redis that is not there is a clear error within the deadline, not a start that hangs (the password is not repeated)", async () => {
    const url = `redis://:s3cret@127.0.0.1:${await freePort()}`;
    const began = performance.now();
    await assert.rejects(ServerLink.open({ redisUrl: url, labId: "lab1", serverId: "lonely" }, 1_000), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.match(error.message, /cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/? \(server link\) within 1 s/);
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
    assert.ok(performance.now() - began < 5_000);
  });

  it("a request reaches the named server and its answer comes back; a refusal keeps its code", async () => {
    const [a, b] = [await open("a"), await open("b")];
    b.serve(async (request, from) => {
      if (request.kind === "workshop-ended") throw new CommandError("not-found", `no workshop ${request.workshopId} (asked by ${from})`);
      return { served: "b", kind: request.kind };
    });
    assert.deepEqual(await a.request("b", { kind: "list-kernels" }), { served: "b", kind: "list-kernels" });
    await assert.rejects(a.request("b", { kind: "workshop-ended", workshopId: "w1" }), (error: unknown) => {
      assert.ok(error instanceof CommandError);
      assert.equal(error.code, "not-found");
      assert.match(error.message, /no workshop w1 \(asked by a\)/);
      return true;
    });
  });

  it("a server that is not running is known at once, not after the timeout", async () => {
    const a = await open("a2");
    const began = performance.now();
    await assert.rejects(a.request("ghost", { kind: "list-kernels" }), /lab server ghost is not running/);
    assert.ok(performance.now() - began < 1_000, "answered without waiting for the 3 s timeout");
  });

  it("another lab's servers on the same Redis never hear this lab's requests", async () => {
    const mine = await open("shared-id", "lab-one");
    const theirs = await open("shared-id", "lab-two");
    let theirsHeard = false;
    theirs.serve(async () => {
      theirsHeard = true;
      return "theirs";
    });
    mine.serve(async () => "mine");
    const asker = await open("asker", "lab-one");
    assert.equal(await asker.request("shared-id", { kind: "agent-holders" }), "mine");
    assert.equal(theirsHeard, false);
  });

  it("a malformed or forged message on a server's channel is ignored and said in the log", async () => {
    const target = await open("target");
    let served = 0;
    target.serve(async () => {
      served += 1;
      return null;
    });
    const forger = createClient({ url: redis.url });
    await forger.connect();
    try {
      await forger.publish("mgpulab:lab1:server:target", "not json");
      await forger.publish("mgpulab:lab1:server:target", JSON.stringify({ type: "request", id: "x", from: "f", request: { kind: "drop-database" } }));
      const asker = await open("asker2");
      assert.equal(await asker.request("target", { kind: "list-kernels" }), null, "the channel still works");
    } finally {
      await forger.quit();
    }
    assert.equal(served, 1, "only the well-formed request was served");
    assert.ok(warnings.filter((line) => line.includes("malformed")).length >= 2);
  });

  it("a server that stops with a request in flight waits for its answer: never told 'refused' for what the other server did", async () => {
    const stopping = await ServerLink.open({ redisUrl: redis.url, labId: "lab1", serverId: "stopping", timeoutMs: 10_000, closeDrainMs: 10_000 });
    const driver = await open("driver");
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let heard!: () => void;
    const served = new Promise<void>((resolve) => (heard = resolve));
    driver.serve(async () => {
      heard();
      await released; // the execute is being carried out while its sender stops
      return "ran";
    });
    const answer = stopping.request("driver", { kind: "list-kernels" });
    await served;
    const closed = stopping.close();
    release();
    assert.equal(await answer, "ran", "the answer that came while stopping is the one given");
    await closed;
  });

  it("a stopping server whose request gets no answer within its drain says the answer may be lost, not that nothing was done", async () => {
    const stopping = await ServerLink.open({ redisUrl: redis.url, labId: "lab1", serverId: "stopping2", timeoutMs: 10_000, closeDrainMs: 300 });
    const silent = await open("silent");
    let heard!: () => void;
    const served = new Promise<void>((resolve) => (heard = resolve));
    silent.serve(() => {
      heard();
      return new Promise(() => undefined); // never answers
    });
    const answer = stopping.request("silent", { kind: "list-kernels" });
    await served;
    const refused = assert.rejects(answer, (error: unknown) => {
      assert.ok(error instanceof CommandError);
      assert.equal(error.code, "unavailable");
      assert.match(error.message, /lab server silent did not answer within 300 ms, before this server stopped: it may have been done/);
      return true;
    });
    await stopping.close();
    await refused;
  });

  it("while Redis is away a request fails at once with 'unavailable'; once it is back, requests work again", async () => {
    const [a, b] = [await open("a3"), await open("b3")];
    b.serve(async () => "pong");
    assert.equal(await a.request("b3", { kind: "list-kernels" }), "pong");
    await redis.kill();
    const began = performance.now();
    await assert.rejects(a.request("b3", { kind: "list-kernels" }), (error: unknown) => error instanceof CommandError && error.code === "unavailable");
    assert.ok(performance.now() - began < 1_000, "no offline queue: not held until Redis returns");
    await redis.restart();
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        assert.equal(await a.request("b3", { kind: "list-kernels" }), "pong");
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });
});
