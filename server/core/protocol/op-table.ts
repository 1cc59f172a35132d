/**
 * The shape of the op tables (ops-notebook.ts, ops-lab.ts): every op the
 * browser may send is declared once, with what it takes, what it answers and
 * what it needs. The server validates requests with `request`, authorises
 * with `access` (server/auth/authorize.ts) and dispatches to a handler whose
 * type is tied to `reply`; the browser's `send(op)` resolves with `reply`'s
 * type and reads `access` to decide what a page offers. An entry without
 * one of the three does not compile (tests/types/op-table.types.ts).
 */
import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "../errors";

export interface OpEntry<Op extends string, Need> {
  /** What the op takes, checked off the wire before anything acts on it; its `op` is the entry's key. */
  readonly request: z.ZodType<{ op: Op }>;
  /** What a success answers besides `ok: true`; the browser parses every answer with it. */
  readonly reply: z.ZodType<object>;
  /** What it needs of the sender: server/auth/authorize.ts enforces it, the browser offers by it. */
  readonly access: Need;
}

/** A table whose every key is an op declared in full. */
export type OpTable<T, Need> = { readonly [Op in keyof T & string]: OpEntry<Op, Need> };

/** An answer that refuses: `code` says what kind of failure (branch on it), `error` says it in words for the user. */
export interface Refusal {
  ok: false;
  error: string;
  code: ErrorCode;
}

/** The table's request schemas, for one discriminated union over `op`. */
export function requestsOf<T extends Record<string, { readonly request: z.core.$ZodTypeDiscriminable }>>(table: T): [T[keyof T]["request"], ...T[keyof T]["request"][]] {
  const requests: T[keyof T]["request"][] = [];
  for (const key in table) requests.push(table[key].request);
  const [first, ...rest] = requests;
  if (first === undefined) throw new Error("an op table declares no op");
  return [first, ...rest];
}

/**
 * A reply field holding one of the lab's views (a notebook, a host, a user):
 * the browser checks that it is there and an object; its inner shape is the
 * server's handler's, which the compiler checks against the same type.
 */
export function view<T extends object>(): z.ZodCustom<T, T> {
  return z.custom<T>((value) => typeof value === "object" && value !== null);
}

/** A reply field holding a list of views. */
export function views<T extends object>(): z.ZodArray<z.ZodCustom<T, T>> {
  return z.array(view<T>());
}

/** The reply of an op that answers nothing but `ok: true` (typed `object`: zod's empty object would forbid even `ok`). */
export const nothing: z.ZodType<object> = z.object({});

/** A refusal as it comes off the wire. */
export const refusalSchema = z.object({ ok: z.literal(false), error: z.string(), code: z.enum(ERROR_CODES) });

/**
 * An answer off the wire as its op declares it: a refusal as sent, a reply
 * checked against the op's reply schema. One that is neither (a field
 * missing, the wrong kind) becomes a refusal that says so, so no caller
 * checks "did the server send a …?".
 */
export function answerOf<T extends object, R extends Refusal>(op: string, reply: z.ZodType<T>, refusal: z.ZodType<R>, wire: unknown): ({ ok: true } & T) | R | Refusal {
  const refused = refusal.safeParse(wire);
  if (refused.success) return refused.data;
  const parsed = typeof wire === "object" && wire !== null && "ok" in wire && wire.ok === true ? reply.safeParse(wire) : null;
  if (parsed === null) return { ok: false, code: "internal", error: `the server's answer to ${op} is neither a reply nor a refusal` };
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join(".")))].join(", ");
    return { ok: false, code: "internal", error: `the server sent no valid ${fields} in its answer to ${op}` };
  }
  return { ...parsed.data, ok: true };
}
