/**
 * Opaque references to running kernels, for lists that must not name a notebook the viewer may not read:
 * an HMAC of the notebook id under a key derived from the lab's auth secret, so every lab server of a lab
 * gives a notebook the same ref, nobody without the secret can make one, and nothing in it reveals the id.
 * A ref is resolved by comparing it with the refs of the kernels running now.
 */
import { createHmac, hkdfSync } from "node:crypto";

export class KernelRefs {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync("sha256", secret, "mgpulab", "kernel-refs", 32));
  }

  of(notebookId: string): string {
    return createHmac("sha256", this.key).update(notebookId).digest("base64url").slice(0, 32);
  }

  /** The notebook among `notebookIds` whose ref is `ref`, or null. */
  resolve(ref: string, notebookIds: Iterable<string>): string | null {
    for (const id of notebookIds) if (this.of(id) === ref) return id;
    return null;
  }
}
