/**
 * The state of the link to one host's agent, as the hosts page, the
 * kernels' statuses and the heartbeat read it. Separate so each of them
 * names it without depending on HostAgent.
 */
import type { AgentMessageOf } from "../core/protocol/agent-messages";

export type HostLinkState =
  | { state: "disconnected" }
  | { state: "connecting" }
  | { state: "connected"; hello: AgentMessageOf<"agent_hello">; since: number }
  /** Open, but nothing has come from it since `silentSince` (epoch ms). */
  | { state: "stalled"; hello: AgentMessageOf<"agent_hello">; since: number; silentSince: number }
  | { state: "unreachable"; error: string; output: string; at: number };

export type LinkedState = Extract<HostLinkState, { state: "connected" | "stalled" }>;

/** True while the link is open and the agent has said hello on it (it may be stalled). */
export function isLinked(state: HostLinkState): state is LinkedState {
  return state.state === "connected" || state.state === "stalled";
}
