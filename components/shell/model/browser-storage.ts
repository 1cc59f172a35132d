/**
 * The page's localStorage (the notebook's unsent drafts, a participant's
 * handled broadcasts), or null where there is none to have: a browser that
 * refuses it (private mode, storage disabled) throws a DOMException on the
 * mere read, and a server render has no window. Callers carry on without it.
 */
export function browserStorage(): Storage | null {
  if (typeof window === "undefined") return null;
  try {
    return window.localStorage;
  } catch (err) {
    if (err instanceof DOMException) return null;
    throw err;
  }
}
