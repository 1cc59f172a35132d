/**
 * All open notebooks of this server process, loaded from the catalog on
 * first open and kept until the server stops. Their kernels are counted,
 * capped and shut down when unused by the kernel registry.
 */
import type { CellTemplate, NotebookDocument, NotebookListItem } from "../core/protocol/notebook-model";
import type { NotebookEvent } from "../core/protocol/socket-api";
import type { GpuHolder } from "../core/protocol/hosts-model";
import type { KernelHosts } from "./kernel-hosts";
import type { NotebookPersistence } from "./persistence-contract";
import { DEFAULT_KERNEL_LIMITS, KernelRegistry, type KernelLimits } from "./kernel-registry";
import { CommandError } from "../errors";
import { LEAVING, NotebookRuntime, type NotebookRuntimeOptions } from "./notebook-runtime";

/** Where notebooks come from and where their changes go. */
export interface NotebookCatalog {
  load(notebookId: string): Promise<{ doc: NotebookDocument; persistence: NotebookPersistence }>;
  /** The notebooks in `readable` (id → the asker's access): who may read what is the access gate's to say. */
  list(state: "active" | "deleted", readable: ReadonlyMap<string, NotebookListItem["access"]>): Promise<NotebookListItem[]>;
  create(ownerId: string, title: string): Promise<NotebookListItem>;
  /** A notebook with these cells (e.g. a scenario's), created whole or not at all; a participant's copy names its workshop. */
  createWithCells(
    ownerId: string,
    title: string,
    cells: Array<{ kind: "code" | "markdown"; source: string; template: CellTemplate | null }>,
    workshopId?: string | null,
  ): Promise<NotebookListItem>;
  duplicate(ownerId: string, notebookId: string): Promise<NotebookListItem>;
  /** Renames a notebook that is not open (an open one renames through its runtime). */
  rename(notebookId: string, title: string): Promise<void>;
  setDeleted(notebookId: string, deleted: boolean): Promise<void>;
  summary(notebookId: string, access?: NotebookListItem["access"]): Promise<NotebookListItem>;
  /** The owner's most recently edited notebook (not deleted) made from this scenario, or null. */
  latestScenarioCopy(ownerId: string, scenarioId: string): Promise<NotebookListItem | null>;
  /** `base`, or `base (n)` when one of the owner's notebooks (deleted ones included) already has that title. */
  freshTitle(ownerId: string, base: string): Promise<string>;
}

export interface NotebookHubOptions extends Pick<NotebookRuntimeOptions, "outputBudget" | "coalescing" | "settleMs" | "log" | "hangAfterMs" | "templates"> {
  catalog: NotebookCatalog;
  /** Where kernels may run; each notebook's kernel spec picks its host. */
  hosts: KernelHosts;
  broadcast: (notebookId: string, event: NotebookEvent, seq: number) => void;
  /** The cap on live kernels and the idle shutdown period (DEFAULT_KERNEL_LIMITS when unset). */
  kernelLimits?: KernelLimits;
  /**
   * With several lab servers: takes the notebook's driver lease before its
   * runtime loads here, and throws DrivenElsewhere when another server
   * drives it (cluster/lab-cluster.ts). Unset: this server drives every notebook.
   */
  claim?: (notebookId: string) => Promise<void>;
}

export class NotebookHub {
  private readonly runtimes = new Map<string, Promise<NotebookRuntime>>();
  readonly kernels: KernelRegistry;
  /** Set once the server stops (stopOpening). */
  private closing = false;

  constructor(private readonly options: NotebookHubOptions) {
    this.kernels = new KernelRegistry(options.kernelLimits ?? DEFAULT_KERNEL_LIMITS);
  }

  get catalog(): NotebookCatalog {
    return this.options.catalog;
  }

  get hosts(): KernelHosts {
    return this.options.hosts;
  }

  /** The open notebook of each agent kernel this server runs: who holds which GPU on the hosts page. */
  async agentKernelHolders(): Promise<Map<string, GpuHolder>> {
    const runtimes = await Promise.all([...this.runtimes.values()].map((runtime) => runtime.catch(() => undefined)));
    const holders = new Map<string, GpuHolder>();
    for (const runtime of runtimes) {
      // Running, or waiting in its host's GPU queue (the hosts page names who waits).
      const agentKernelId = runtime?.kernel.placement?.agentKernelId ?? runtime?.kernel.queuedAgentKernelId;
      if (runtime && agentKernelId) holders.set(agentKernelId, { notebookId: runtime.doc.id, title: runtime.doc.title });
    }
    return holders;
  }

  /** The runtime of a notebook, loading it on first open; concurrent opens share one load. */
  open(notebookId: string): Promise<NotebookRuntime> {
    // A server that is stopping opens nothing again (what it opened now would never be stored).
    if (this.closing) return Promise.reject(new CommandError("unavailable", LEAVING));
    let runtime = this.runtimes.get(notebookId);
    if (!runtime) {
      runtime = this.load(notebookId);
      this.runtimes.set(notebookId, runtime);
      runtime.catch(() => this.runtimes.delete(notebookId));
    }
    return runtime;
  }

  /** An already open runtime, if any. */
  async get(notebookId: string): Promise<NotebookRuntime | undefined> {
    const runtime = this.runtimes.get(notebookId);
    return runtime ? runtime.catch(() => undefined) : undefined;
  }

  async rename(notebookId: string, title: string): Promise<NotebookListItem> {
    const runtime = await this.get(notebookId);
    if (runtime) await runtime.rename(title);
    else await this.catalog.rename(notebookId, title);
    return this.catalog.summary(notebookId);
  }

  async setDeleted(notebookId: string, deleted: boolean): Promise<NotebookListItem> {
    await this.catalog.setDeleted(notebookId, deleted);
    (await this.get(notebookId))?.markDeleted(deleted);
    return this.catalog.summary(notebookId);
  }

  /** A socket joined the notebook's room: its kernel is in use while anyone views it. */
  viewerJoined(notebookId: string, socketId: string): void {
    this.kernels.viewerJoined(notebookId, socketId);
  }

  /** A viewer's tab was hidden or shown again. */
  viewerVisibility(notebookId: string, socketId: string, visible: boolean): void {
    this.kernels.viewerVisibility(notebookId, socketId, visible);
  }

  /** A socket left the room (closed the tab, lost the connection). */
  viewerLeft(notebookId: string, socketId: string): void {
    this.kernels.viewerLeft(notebookId, socketId);
  }

  /** The lab server stops: kernels that live with a host agent are left running (the next server takes them over); the others are stopped. */
  /** The server is stopping: no notebook is opened again, whatever asks (its writes would come after the last flush). */
  stopOpening(): void {
    this.closing = true;
  }

  async detachAll(): Promise<void> {
    const runtimes = await Promise.all([...this.runtimes.values()].map((runtime) => runtime.catch(() => undefined)));
    await Promise.all(runtimes.map((runtime) => (runtime?.kernelOutlivesServer ? runtime.detach() : runtime?.dispose())));
    this.runtimes.clear();
  }

  /** Opens the notebook and takes over its kernel from the previous server; false when the kernel is gone. */
  async resume(run: Parameters<NotebookRuntime["resume"]>[0] & { notebookId: string }): Promise<boolean> {
    const runtime = await this.open(run.notebookId);
    return runtime.resume(run);
  }

  async shutdownAll(): Promise<void> {
    const runtimes = await Promise.all([...this.runtimes.values()].map((runtime) => runtime.catch(() => undefined)));
    await Promise.all(runtimes.map((runtime) => runtime?.dispose()));
    this.runtimes.clear();
  }

  /**
   * Another server took the notebook over (this one lost its lease): the
   * runtime lets go of its kernel without ending it, and is forgotten here.
   */
  async drop(notebookId: string): Promise<void> {
    const runtime = await this.get(notebookId);
    this.runtimes.delete(notebookId);
    this.kernels.untrack(notebookId);
    if (runtime?.kernelOutlivesServer) await runtime.detach();
    else await runtime?.dispose("another lab server took this notebook over");
  }

  /** The notebooks whose runtimes are open here. */
  openNotebookIds(): string[] {
    return [...this.runtimes.keys()];
  }

  private async load(notebookId: string): Promise<NotebookRuntime> {
    await this.options.claim?.(notebookId);
    const { doc, persistence } = await this.options.catalog.load(notebookId);
    const runtime = new NotebookRuntime(doc, {
      hosts: this.options.hosts,
      persistence,
      outputBudget: this.options.outputBudget,
      coalescing: this.options.coalescing,
      settleMs: this.options.settleMs,
      hangAfterMs: this.options.hangAfterMs,
      templates: this.options.templates,
      log: this.options.log,
      broadcast: (event, seq) => this.options.broadcast(notebookId, event, seq),
      claimKernel: () => this.kernels.claim(notebookId),
    });
    this.kernels.track(notebookId, runtime);
    return runtime;
  }
}
