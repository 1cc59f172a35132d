/**
 * Bounds the bytes of .ipynb files being imported at once. An import holds
 * its file, the parsed JSON and the cells it keeps, a few times the file's
 * size, all at the same time; four concurrent 50 MB imports took the server
 * past 1.6 GB. Each import waits here, before its body is read (the client
 * waits on TCP), until its declared size fits: small files pass side by side,
 * large ones one after another. Parsing is synchronous anyway, so waiting
 * costs no throughput.
 */
export class ImportGate {
  private inFlight = 0;
  private readonly waiting: Array<{ bytes: number; admit: () => void }> = [];

  constructor(readonly capacityBytes: number) {}

  /** Resolves with a release function once `bytes` fit (one import is always admitted when none runs). */
  async acquire(bytes: number): Promise<() => void> {
    const weight = Math.min(Math.max(bytes, 0), this.capacityBytes);
    if (this.waiting.length > 0 || !this.fits(weight)) {
      // First come, first served: a large file is not overtaken forever by small ones.
      await new Promise<void>((admit) => this.waiting.push({ bytes: weight, admit }));
    } else {
      this.inFlight += weight;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight -= weight;
      this.admitWaiting();
    };
  }

  private fits(weight: number): boolean {
    return this.inFlight === 0 || this.inFlight + weight <= this.capacityBytes;
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.inFlight += next.bytes;
      next.admit();
    }
  }
}
