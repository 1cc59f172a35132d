/**
 * The end of every exhaustive switch over a tagged union: a variant nobody
 * handles breaks the build here, and a value the types ruled out (data from
 * an older or newer peer) fails loudly at run time instead of doing nothing.
 */
export function assertNever(value: never, what = "variant"): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}
