/**
 * Requests to a kernel that wait for one reply by id (a ping, the stacks of
 * its processes, a completion or an inspection): each is answered once, or
 * given up after its timeout. Separate from KernelSession so every such
 * request waits the same way, written once.
 */
export class PendingReplies<T> {
  private readonly waiting = new Map<string, (reply: T) => void>();

  /** Sends the request (`send`, after the wait is registered) and resolves with its reply, or null after `timeoutMs`. */
  ask(id: string, send: () => void, timeoutMs: number): Promise<T | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(null);
      }, timeoutMs);
      this.waiting.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      send();
    });
  }

  /** The kernel's reply to request `id`; a reply nobody waits for (any more) is dropped. */
  answer(id: string, reply: T): void {
    this.waiting.get(id)?.(reply);
    this.waiting.delete(id);
  }
}
