/**
 * Doing one planned fault to the running lab, and waiting until the part it
 * hit is back (a killed server restarted and listening, PostgreSQL and
 * Redis accepting connections, nginx listening): a fault is done to the
 * lab, then the lab is left to recover on its own. Each returns what it
 * did, with its times, for the report and the checker.
 */
import { signal } from "../helpers/daemons";
import type { ChaosCluster } from "./cluster";
import type { FaultRecord } from "./check";
import type { Participant } from "./participant";
import { dropCountOf, indexOf, postgresModeOf, serverOf, type PlannedFault } from "./schedule";

export async function fireFault(fault: PlannedFault, cluster: ChaosCluster, participants: readonly Participant[]): Promise<FaultRecord> {
  const at = Date.now();
  const done = (detail: string, extra: Partial<FaultRecord> = {}): FaultRecord => ({ index: fault.index, kind: fault.kind, at, endedAt: Date.now(), detail, error: null, ...extra });
  try {
    switch (fault.kind) {
      case "server-sigkill":
      case "server-sigterm": {
        const slot = cluster.servers[serverOf(fault)];
        const pid = slot.server.pid;
        await cluster.killServer(slot, fault.kind === "server-sigkill" ? "SIGKILL" : "SIGTERM");
        return done(`lab server ${slot.number} (pid ${pid}) ${fault.kind === "server-sigkill" ? "SIGKILLed" : "stopped with SIGTERM"}; restarted as pid ${slot.server.pid}`);
      }
      case "agent-link": {
        // A server that drives no kernel (it just restarted) has no link: then the other one's is cut.
        const first = serverOf(fault);
        for (const slot of [cluster.servers[first], cluster.servers[1 - first]!]) {
          const count = cluster.dropAgentLink(slot);
          if (count > 0) return done(`lab server ${slot.number}'s link to the host agent cut (${count} link process(es) SIGKILLed)`);
        }
        return done("no lab server had a link to the host agent open", { error: "no link to cut" });
      }
      case "kernel-kill": {
        const withKernel = participants.map((participant) => ({ participant, kernel: participant.kernelShown() })).filter((each) => each.kernel !== null);
        const busy = withKernel.filter((each) => each.kernel!.busy);
        const candidates = busy.length > 0 ? busy : withKernel;
        if (candidates.length === 0) return done("no participant's page showed a running kernel", { error: "no kernel to kill" });
        const { participant, kernel } = candidates[indexOf(fault, candidates.length)]!;
        signal([kernel!.pid], "SIGKILL");
        return done(`${participant.name}'s kernel (pid ${kernel!.pid}, ${kernel!.busy ? "busy" : "idle"}) SIGKILLed`, {
          kernel: { participant: participant.index, notebookId: participant.notebookId, pid: kernel!.pid },
        });
      }
      case "redis-restart":
        await cluster.redis.restart();
        return done(`Redis SIGKILLed and started empty (pid ${cluster.redis.pid})`);
      case "postgres-restart": {
        const mode = postgresModeOf(fault);
        await cluster.postgres.restart(mode);
        return done(`PostgreSQL restarted (${mode === "fast" ? "fast shutdown" : "immediate shutdown: crash recovery"}; pid ${cluster.postgres.pid()})`);
      }
      case "nginx-restart":
        await cluster.nginx.restart();
        return done(`nginx stopped (every connection through it closed) and started again (pid ${cluster.nginx.pid})`);
      case "client-drop": {
        const count = Math.min(dropCountOf(fault), participants.length);
        const first = indexOf(fault, participants.length);
        const dropped: string[] = [];
        for (let i = 0; i < count; i += 1) {
          const participant = participants[(first + i) % participants.length]!;
          // The transport closes under the page, as when Wi-Fi drops: socket.io reconnects by itself.
          const engine = participant.connection?.io.engine;
          if (engine) {
            engine.close();
            dropped.push(participant.name);
          }
        }
        return done(`connections of ${dropped.join(", ") || "nobody"} dropped`);
      }
    }
  } catch (error) {
    return { index: fault.index, kind: fault.kind, at, endedAt: Date.now(), detail: "failed", error: error instanceof Error ? error.message : String(error) };
  }
}
