/**
 * The hosts page's ops (the list, and checking one host now): their
 * handlers over the lab's hosts, naming who holds each GPU as the viewer may
 * see it. Separate from the socket edge, which only dispatches to them
 * (socket/lab-handler.ts).
 */
import { CommandError } from "../errors";
import type { HolderName } from "../core/protocol/hosts-model";
import type { Actor } from "../auth";
import { HolderNaming } from "./holder-names";
import type { LabHandlerTable, LabServices } from "../socket/lab-handler";

export type HostOp = "list-hosts" | "check-host";

type HostServices = Pick<LabServices, "hosts" | "drivers" | "access" | "repositories">;

export function hostHandlers(services: HostServices): LabHandlerTable<HostOp> {
  const { hosts } = services;
  return {
    "list-hosts": async (_command, actor) => {
      if (!hosts) return { ok: true, hosts: [] };
      const holders = await visibleHolders(actor, services);
      return { ok: true, hosts: await hosts.view((kernel) => holders.get(kernel) ?? null) };
    },
    "check-host": async (command, actor) => {
      if (!hosts) throw new CommandError("not-found", `no host "${command.hostId}": this lab runs its kernels without host agents`);
      const holders = await visibleHolders(actor, services);
      return { ok: true, host: await hosts.check(command.hostId, (kernel) => holders.get(kernel) ?? null) };
    },
  };
}

/** Who holds or waits for GPUs: the person always, a notebook the actor may read by its title (holder-names.ts). */
function visibleHolders(actor: Actor, services: HostServices): Promise<Map<string, HolderName>> {
  return new HolderNaming({ holders: () => services.drivers.agentHolders(), owners: services.repositories.access, gate: services.access.gate }).forActor(actor);
}
