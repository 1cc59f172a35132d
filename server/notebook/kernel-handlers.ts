/**
 * The running-kernels ops (the list, and stopping or restarting kernels):
 * their handlers over the notebook drivers, each kernel shown as its viewer
 * may see it. Separate from the socket edge, which only dispatches to them
 * (socket/lab-handler.ts).
 */
import { CommandError } from "../errors";
import type { KernelListing, ListedKernel } from "../core/protocol/kernels-model";
import type { Actor } from "../auth";
import { RUNNING_KERNELS_SHUTDOWN_REASON } from "./kernel-policy";
import type { LabHandlerTable, LabServices } from "../socket/lab-handler";

export type KernelOp = "list-kernels" | "shutdown-kernel" | "shutdown-listed-kernel" | "shutdown-all-kernels" | "restart-kernel";

type KernelServices = Pick<LabServices, "drivers" | "access" | "repositories">;

export function kernelHandlers(services: KernelServices): LabHandlerTable<KernelOp> {
  const { drivers, access } = services;
  const shutdown = (notebookId: string) => drivers.notebookOp(notebookId, { op: "shutdown-kernel", reason: RUNNING_KERNELS_SHUTDOWN_REASON });
  return {
    "list-kernels": async (_command, actor) => ({ ok: true, kernels: await visibleKernels(actor, services) }),
    "shutdown-kernel": async (command, actor) => {
      await shutdown(command.notebookId);
      return { ok: true, kernels: await visibleKernels(actor, services) };
    },
    "shutdown-listed-kernel": async (command, actor) => {
      const running = (await drivers.listKernels()).kernels.map((kernel) => kernel.notebookId);
      const notebookId = access.kernelRefs.resolve(command.kernelRef, running);
      if (notebookId === null) throw new CommandError("not-found", "that kernel is no longer running");
      await shutdown(notebookId);
      return { ok: true, kernels: await visibleKernels(actor, services) };
    },
    "shutdown-all-kernels": async (_command, actor) => {
      const all = await drivers.listKernels();
      const stoppable = await access.gate.filterNotebooks(actor, all.kernels.map((kernel) => kernel.notebookId), "stop-kernel");
      for (const notebookId of stoppable) await shutdown(notebookId);
      return { ok: true, kernels: await visibleKernels(actor, services) };
    },
    "restart-kernel": async (command) => {
      await drivers.notebookOp(command.notebookId, { op: "restart-kernel" });
      return { ok: true };
    },
  };
}

/**
 * An admin sees every kernel (a held GPU is everyone's problem), those of notebooks they may not read by
 * their owner's name alone; anyone else sees only the kernels of notebooks they may read.
 */
async function visibleKernels(actor: Actor, services: KernelServices): Promise<KernelListing> {
  const all = await services.drivers.listKernels();
  const { gate, kernelRefs } = services.access;
  const readable = await gate.filterNotebooks(actor, all.kernels.map((kernel) => kernel.notebookId), "read");
  const seeAll = gate.may(actor, "list-all-kernels");
  const hidden = all.kernels.filter((kernel) => !readable.has(kernel.notebookId)).map((kernel) => kernel.notebookId);
  const owners = hidden.length === 0 || !seeAll ? new Map<string, string>() : await services.repositories.access.ownerNames(hidden);
  const kernels: ListedKernel[] = [];
  for (const kernel of all.kernels) {
    const kernelRef = kernelRefs.of(kernel.notebookId);
    if (readable.has(kernel.notebookId)) kernels.push({ ...kernel, kernelRef });
    else if (seeAll) kernels.push({ ...kernel, notebookId: null, title: `a notebook of ${owners.get(kernel.notebookId) ?? "another user"}`, kernelRef });
  }
  return { ...all, kernels };
}
