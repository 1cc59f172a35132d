/**
 * What to do with an agent that answered a new link: one running this
 * lab's code is used; one running other code (an older lab's) with no
 * kernel of its own is replaced (ended, and started again with this lab's
 * code, a few tries at most); one that still runs kernels is kept until they
 * end (they are someone's work), and new kernels start there meanwhile.
 * Separate from HostAgent: a pure decision, with the words the log says.
 */
import type { AgentMessageOf } from "../core/protocol/agent-messages";
import type { AgentCode } from "./agent-link";

/** Replacing an agent that runs other code is tried this many times before it is kept as it is. */
const MAX_REPLACEMENTS = 3;

export type CodeVerdict = { kind: "current" } | { kind: "keep"; message: string } | { kind: "replace"; message: string };

export function codeVerdict(hostId: string, hello: Pick<AgentMessageOf<"agent_hello">, "codeHash" | "kernels">, code: Pick<AgentCode, "codeHash">, attempt: number): CodeVerdict {
  if (hello.codeHash === code.codeHash) return { kind: "current" };
  const theirs = hello.codeHash.slice(0, 8);
  const ours = code.codeHash.slice(0, 8);
  const busy = hello.kernels.filter((kernel) => kernel.state !== "exited").length;
  if (busy > 0 || attempt >= MAX_REPLACEMENTS) {
    return { kind: "keep", message: `host ${hostId}: its agent runs other code (${theirs}, this lab ${ours})${busy > 0 ? ` and ${busy} kernel(s); it is replaced once they end` : ""}` };
  }
  return { kind: "replace", message: `host ${hostId}: replacing its agent, which runs other code (${theirs}) and no kernel, with this lab's (${ours})` };
}
