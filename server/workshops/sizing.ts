/**
 * Whether a workshop's plan fits where its kernels run, said to its
 * facilitator (only) when the workshop is made or resized, before the class
 * arrives: each admitted participant gets a kernel started ahead of time,
 * so the lab server's kernel cap, the machine's memory and the host's GPUs
 * must hold the class, with what to change when they do not. Pure: the
 * numbers come from the caller (kernel-capacity.ts measures the machine).
 */
import { gib, KERNEL_BYTES, RESERVED_BYTES, type KernelCapacity } from "../kernel-capacity";
import type { WorkshopSizing } from "../core/protocol/workshop-model";

/** A rank process a DDP step starts imports torch too: about a kernel's PSS (BENCHMARKS.md). */
export const RANK_BYTES = KERNEL_BYTES;
/** Past this many participants per core, a step everyone runs at once takes visibly longer than alone. */
export const PARTICIPANTS_PER_CORE_FELT = 8;

export interface SizingFacts {
  capacity: number;
  /** The lab server's kernel cap and where it comes from. */
  kernels: Pick<KernelCapacity, "max" | "fromSetting" | "why"> & { machine: KernelCapacity["machine"] | null };
  /** Kernels already spoken for: admitted participants of the lab's other running workshops. */
  heldElsewhere: number;
  /** Scenarios in the workshop: each copy a participant opens has a kernel of its own. */
  scenarios: number;
  /** The most DDP rank processes one step starts (the scenarios' device counts): each a torch process while it runs. */
  ranksPerStep: number;
  /** The kernels run on this machine (its memory and cores count); false: on another host. */
  onThisMachine: boolean;
  hostId: string;
  gpusPerParticipant: number;
  /** The host's GPUs when known. */
  hostGpus: number | null;
}

export function workshopSizing(f: SizingFacts): WorkshopSizing {
  const lines: string[] = [];
  const advice: string[] = [];
  let verdict: WorkshopSizing["verdict"] = "fits";
  const worse = (next: WorkshopSizing["verdict"]) => {
    if (next === "does-not-fit" || (next === "tight" && verdict === "fits")) verdict = next;
  };

  const room = Math.max(0, f.kernels.max - f.heldElsewhere);
  const others = f.heldElsewhere > 0 ? `, ${f.heldElsewhere} of them held by the lab's other workshops` : "";
  if (f.capacity <= room) {
    lines.push(`Kernels: the ${f.capacity} participant${f.capacity === 1 ? "" : "s"} fit: this lab server runs ${f.kernels.max} at once${others} (${f.kernels.why}).`);
  } else {
    worse("does-not-fit");
    lines.push(`Kernels: only ${room} of the ${f.capacity} participants can have a kernel: this lab server runs ${f.kernels.max} at once${others} (${f.kernels.why}).`);
    advice.push(`Lower this workshop's capacity to ${room}; the others wait in the queue with their place shown.`);
    if (f.heldElsewhere > 0) advice.push("Or end (or shrink) the lab's other workshops.");
    advice.push(`Or raise MGPULAB_MAX_KERNELS and restart the lab, if the machine has the memory: about ${KERNEL_BYTES / 2 ** 20} MiB per kernel with torch.`);
  }
  if (f.scenarios > 1 && f.capacity * f.scenarios > room) {
    worse("tight");
    lines.push(`Each scenario copy a participant opens runs a kernel of its own: with all ${f.scenarios} open, the class would need ${f.capacity * f.scenarios} (an unused one is shut down after the idle period).`);
    advice.push("Ask the class to work through one scenario at a time.");
  }

  if (f.onThisMachine && f.kernels.machine !== null) {
    const machine = f.kernels.machine;
    const free = machine.availableBytes - RESERVED_BYTES;
    const idle = f.capacity * KERNEL_BYTES;
    const peak = idle + f.capacity * f.ranksPerStep * RANK_BYTES;
    if (idle > free) {
      worse("does-not-fit");
      lines.push(`Memory: ${f.capacity} kernels with torch need about ${gib(idle)} GiB; this machine had ${gib(Math.max(0, free))} GiB for kernels at start.`);
      advice.push(`Lower the capacity to ${Math.max(0, Math.floor(free / KERNEL_BYTES))}, or run the kernels on a GPU host.`);
    } else if (f.ranksPerStep > 0 && peak > free) {
      worse("tight");
      const together = Math.max(1, Math.floor((free - idle) / (f.ranksPerStep * RANK_BYTES)));
      lines.push(
        `Memory: the kernels need about ${gib(idle)} GiB of the ${gib(free)} GiB free; a DDP step starts ${f.ranksPerStep} more torch processes per participant, so about ${together} can run one at the same moment (all ${f.capacity}: ${gib(peak)} GiB).`,
      );
      advice.push("Stagger the DDP steps (led pace, revealing them in turn), or lower the devices in a preset.");
    } else {
      lines.push(`Memory: about ${gib(peak)} GiB at the busiest moment (every participant in a DDP step) of the ${gib(Math.max(0, free))} GiB free.`);
    }
    if (f.capacity > machine.cores * PARTICIPANTS_PER_CORE_FELT) {
      worse("tight");
      lines.push(
        `CPU: ${machine.cores} core${machine.cores === 1 ? "" : "s"} for ${f.capacity} participants: when everyone runs a step at once, each takes about ${Math.ceil(f.capacity / machine.cores)} times as long as alone (output still streams as it goes).`,
      );
    }
  } else if (!f.onThisMachine) {
    lines.push(`Memory and CPU: the kernels run on host ${f.hostId}; its size is not checked here.`);
  }

  if (f.gpusPerParticipant > 0) {
    if (f.hostGpus === null) lines.push(`GPUs: ${f.gpusPerParticipant} each on host ${f.hostId}; how many it has is not known until its agent reports.`);
    else lines.push(`GPUs: ${f.gpusPerParticipant * f.capacity} of host ${f.hostId}'s ${f.hostGpus} (${f.gpusPerParticipant} each).`);
  }

  const summary =
    verdict === "fits" ? `This lab can hold ${f.capacity} participants.` : verdict === "tight" ? `This lab can hold ${f.capacity} participants, with limits below.` : `This lab cannot give all ${f.capacity} participants a kernel.`;
  return { verdict, summary, details: lines, advice };
}
