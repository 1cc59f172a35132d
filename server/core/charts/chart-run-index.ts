/** A run's series looked up by variant → rank → metric name, variants in drawing order. */
import type { SeriesBuffer } from "./chart-series-buffer";
import { orderVariants, UNTAGGED, variantLabel } from "./chart-variants";
import type { RunView } from "./metric-store";

export class RunIndex {
  /** Variant tags in drawing order. */
  readonly variants: string[];
  private readonly byVariant = new Map<string, Map<number, Map<string, SeriesBuffer>>>();

  /** `untagged`: what the run's untagged variant is called (its cell's name). */
  constructor(
    run: RunView | undefined,
    readonly untagged: string = UNTAGGED,
  ) {
    for (const s of run?.series ?? []) {
      let ranks = this.byVariant.get(s.key.tag);
      if (!ranks) this.byVariant.set(s.key.tag, (ranks = new Map()));
      let names = ranks.get(s.key.rank);
      if (!names) ranks.set(s.key.rank, (names = new Map()));
      names.set(s.key.name, s);
    }
    this.variants = orderVariants(this.byVariant.keys());
  }

  /** Ranks of a variant, ascending; with `name`, only ranks that logged it. */
  ranks(tag: string, name?: string): number[] {
    const ranks = this.byVariant.get(tag);
    if (!ranks) return [];
    return [...ranks.entries()]
      .filter(([, names]) => name === undefined || (names.get(name)?.length ?? 0) > 0)
      .map(([rank]) => rank)
      .sort((a, b) => a - b);
  }

  /** How a variant reads in legends and axes. */
  label(tag: string): string {
    return variantLabel(tag, this.untagged);
  }

  get(tag: string, rank: number, name: string): SeriesBuffer | undefined {
    return this.byVariant.get(tag)?.get(rank)?.get(name);
  }

  has(name: string): boolean {
    return this.variants.some((tag) => this.ranks(tag, name).length > 0);
  }
}
