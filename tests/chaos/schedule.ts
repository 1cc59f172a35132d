/**
 * The chaos run's schedule: which part of the lab fails, and when, as a
 * pure function of a seed and a duration, so a run is printed before it
 * starts and replayed by giving the same seed. Every kind of fault occurs
 * at least once; the rest are drawn with weights (a server's death and a
 * client's dropped connection are the common ones in a real room).
 *
 * The times are the earliest a fault may fire: the runner fires each one
 * only once the previous fault's part is back (a restarted server
 * listening, PostgreSQL accepting connections), so what a fault finds is
 * the lab recovering from one thing at a time, never a pile-up the lab
 * does not promise to survive.
 */

export const FAULT_KINDS = ["server-sigkill", "server-sigterm", "agent-link", "kernel-kill", "redis-restart", "postgres-restart", "nginx-restart", "client-drop"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** How often each kind is drawn after the first of each (relative weights). */
const WEIGHTS: Record<FaultKind, number> = {
  "server-sigkill": 3,
  "server-sigterm": 2,
  "agent-link": 2,
  "kernel-kill": 3,
  "redis-restart": 1,
  "postgres-restart": 1,
  "nginx-restart": 1,
  "client-drop": 3,
};

/** A fault every ~20 s on average: at 10 minutes, about 30. */
const MEAN_GAP_MS = 20_000;

export interface PlannedFault {
  /** 1-based, in firing order. */
  index: number;
  /** Earliest time after the chaos phase starts. */
  atMs: number;
  kind: FaultKind;
  /**
   * Which target, as a number in [0, 1) drawn with the schedule: a server
   * (below 0.5: the first), a participant (its index in the class,
   * scaled), how many clients drop.
   */
  pick: number;
}

/** A small, fast PRNG (mulberry32): the same seed gives the same numbers on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seed for one stream of choices derived from the run's seed (each participant draws from its own). */
export function derivedSeed(seed: number, stream: number): number {
  let h = (seed ^ Math.imul(stream + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function weightedKind(random: () => number): FaultKind {
  const total = FAULT_KINDS.reduce((sum, kind) => sum + WEIGHTS[kind], 0);
  let at = random() * total;
  for (const kind of FAULT_KINDS) {
    at -= WEIGHTS[kind];
    if (at < 0) return kind;
  }
  return FAULT_KINDS[FAULT_KINDS.length - 1]!;
}

/** The faults of a run of `durationMs`: at least one of each kind, spread over the run with jitter, none in its last tenth (the lab is left to settle). */
export function makeSchedule(seed: number, durationMs: number): PlannedFault[] {
  const random = seededRandom(seed);
  const count = Math.max(FAULT_KINDS.length, Math.round(durationMs / MEAN_GAP_MS));
  const kinds = [...shuffled(FAULT_KINDS, random), ...Array.from({ length: count - FAULT_KINDS.length }, () => weightedKind(random))];
  const order = shuffled(kinds, random);
  const span = durationMs * 0.9;
  const slot = span / count;
  return order.map((kind, i) => ({
    index: i + 1,
    // Each in its own slot, anywhere in its middle: the order is kept and two faults never share a moment.
    atMs: Math.round(slot * i + slot * (0.2 + 0.6 * random())),
    kind,
    pick: random(),
  }));
}

/** A server of two, from a fault's pick. */
export function serverOf(fault: Pick<PlannedFault, "pick">): 0 | 1 {
  return fault.pick < 0.5 ? 0 : 1;
}

/** One of `count` things (participants), from a fault's pick. */
export function indexOf(fault: Pick<PlannedFault, "pick">, count: number): number {
  return Math.min(count - 1, Math.floor(fault.pick * count));
}

/** PostgreSQL's restart mode from a fault's pick: an operator's restart, or a crash. */
export function postgresModeOf(fault: Pick<PlannedFault, "pick">): "fast" | "immediate" {
  return fault.pick < 0.5 ? "fast" : "immediate";
}

/** How many clients lose their connection at once (1 to 5: one laptop, or a corner of the room's Wi-Fi). */
export function dropCountOf(fault: Pick<PlannedFault, "pick">): number {
  return 1 + Math.floor(fault.pick * 5);
}

export function describePlanned(fault: PlannedFault): string {
  const target = (() => {
    switch (fault.kind) {
      case "server-sigkill":
      case "server-sigterm":
      case "agent-link":
        return `lab server ${serverOf(fault) + 1}`;
      case "kernel-kill":
        return "a participant's kernel (a busy one when there is one)";
      case "postgres-restart":
        return postgresModeOf(fault) === "fast" ? "fast shutdown" : "immediate (crash) shutdown";
      case "client-drop":
        return `${dropCountOf(fault)} participant(s)' connections`;
      case "redis-restart":
        return "SIGKILL, started empty";
      case "nginx-restart":
        return "every connection through it";
    }
  })();
  return `#${String(fault.index).padStart(2)} at ${(fault.atMs / 1000).toFixed(1).padStart(6)} s  ${fault.kind.padEnd(16)} ${target}`;
}
