/**
 * The hosts file's settings for one agent and the agent's word on them: what
 * the next link (or a `configure`) gives it, over which transport, and what
 * it said it took or kept (logged, and kept for the hosts page). Separate
 * from HostAgent: what was asked and answered of the settings, not the link.
 */
import type { AgentSettings, SettingsNote } from "../core/protocol/agent-messages";
import type { AgentBootSettings, LinkTransport } from "./agent-link";
import type { Log } from "../logger";

export class AgentSettingsState {
  private notes: SettingsNote[] = [];

  constructor(
    private current: { settings: AgentBootSettings; transport: LinkTransport },
    private readonly hostId: string,
    private readonly log: Log,
  ) {}

  get settings(): AgentBootSettings {
    return this.current.settings;
  }

  get transport(): LinkTransport {
    return this.current.transport;
  }

  /** The last word of the agent on the settings (empty before any). */
  get lastNotes(): readonly SettingsNote[] {
    return this.notes;
  }

  /** The hosts file changed: the next link (or `configure`) carries these. */
  update(settings: AgentBootSettings, transport: LinkTransport): void {
    this.current = { settings, transport };
  }

  /** The agent's word on the settings a link or a reload (`from`) brought. */
  heard(notes: readonly SettingsNote[], from: string): void {
    if (notes.length > 0) this.notes = [...notes];
    for (const note of notes) {
      this.log(note.applied ? "info" : "warning", `host ${this.hostId}: ${note.applied ? "the agent took" : "the agent kept"} from ${from}: ${note.message}`);
    }
  }
}

/** The part of a link's boot settings a running agent takes from a reloaded file. */
export function wireSettings(settings: AgentBootSettings): AgentSettings {
  const { leaseSeconds, bufferBytes, gpus, whenFull, interruptGraceMs, python } = settings;
  return { leaseSeconds, bufferBytes, gpus, whenFull, interruptGraceMs, python };
}

