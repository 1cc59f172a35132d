/** Thrown by the hub's claim hook: another server drives the notebook (its driver lease, persistence/driver-leases.ts); commands go there. */
export class DrivenElsewhere extends Error {
  constructor(
    readonly notebookId: string,
    readonly serverId: string,
  ) {
    super(`notebook ${notebookId} is driven by lab server ${serverId}`);
  }
}
