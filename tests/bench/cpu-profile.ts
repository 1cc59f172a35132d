/**
 * Where a process's CPU went, from a V8 .cpuprofile (node --cpu-prof, or the
 * inspector): self time by area (a package, a folder of server/, the garbage
 * collector), time by area including what it called, and the server's own
 * functions including what they called. Shared by the benchmarks.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface ProfileSummary {
  /** Milliseconds sampled busy (everything but idle). */
  busyMs: number;
  /** [area, ms] by self time, largest first. */
  selfByArea: Array<[string, number]>;
  /** [area, ms] counting every sample with the area anywhere on its stack. */
  inclusiveByArea: Array<[string, number]>;
  /** [function, ms] of server/ functions, counting what they called. */
  inclusiveServer: Array<[string, number]>;
  /** [function, ms] by self time, any area. */
  selfByFunction: Array<[string, number]>;
}

/** The area a frame belongs to: a package of node_modules, a folder of server/, node's internals or V8's own. */
export function areaOf(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(V8 builtins)";
  if (url.startsWith("node:")) return "node internals";
  // The generated Prisma client lives under server/persistence/generated*: it is Prisma's code, not the lab's.
  if (/\/server\/persistence\/generated/.test(url)) return "prisma client (generated)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const server = /\/server\/(?:([^/]+)\/)?[^/]+$/.exec(url);
  if (server) return `server/${server[1] ?? ""}`;
  return url.replace(/^.*\/work\/[^/]+\//, "");
}

export function summarizeProfile(file: string, top = 20): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfArea = new Map<string, number>();
  const inclusiveArea = new Map<string, number>();
  const inclusiveServer = new Map<string, number>();
  const selfFunction = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms);
  let busy = 0;
  profile.samples.forEach((sample, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(sample);
    if (!node) return;
    const area = areaOf(node.callFrame.url, node.callFrame.functionName);
    add(selfArea, area, ms);
    if (area === "(idle)") return;
    busy += ms;
    add(selfFunction, `${node.callFrame.functionName || "(anonymous)"} [${area}]`, ms);
    const areas = new Set<string>();
    const functions = new Set<string>();
    for (let at: number | undefined = node.id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      const frameArea = areaOf(frame.url, frame.functionName);
      if (frameArea !== "(root)") areas.add(frameArea);
      if (frameArea.startsWith("server/")) functions.add(`${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*\/server\//, "server/")}:${frame.lineNumber + 1}`);
    }
    for (const each of areas) add(inclusiveArea, each, ms);
    for (const each of functions) add(inclusiveServer, each, ms);
  });
  const sorted = (map: Map<string, number>): Array<[string, number]> =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => [name, Math.round(ms)]);
  return {
    busyMs: Math.round(busy),
    selfByArea: sorted(selfArea),
    inclusiveByArea: sorted(inclusiveArea),
    inclusiveServer: sorted(inclusiveServer),
    selfByFunction: sorted(selfFunction),
  };
}

/** The summary as Markdown lines: each area's share of the busy time. */
export function profileTable(summary: ProfileSummary, rows = 12): string[] {
  const share = (ms: number) => `${((100 * ms) / Math.max(1, summary.busyMs)).toFixed(1)} %`;
  const lines = [`busy ${summary.busyMs} ms sampled`, "", "| area | self | with what it called |", "| --- | ---: | ---: |"];
  const inclusive = new Map(summary.inclusiveByArea);
  for (const [area, ms] of summary.selfByArea.filter(([area]) => area !== "(idle)").slice(0, rows)) {
    lines.push(`| ${area} | ${share(ms)} | ${inclusive.has(area) ? share(inclusive.get(area)!) : ""} |`);
  }
  return lines;
}
