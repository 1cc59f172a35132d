/**
 * Light or dark: the user's choice (system, light or dark, remembered in
 * localStorage) resolved against the browser's `prefers-color-scheme`. The
 * page's colours are CSS tokens (app/tokens.css) switched by
 * `<html data-theme="dark">`; the same attribute is set by a tiny inline
 * script before the first paint (THEME_BOOT_SCRIPT), so a dark page never
 * flashes white.
 */

export type ThemeChoice = "system" | "light" | "dark";
export type Theme = "light" | "dark";

export const THEME_STORAGE_KEY = "mgpulab-theme";
export const THEME_CHOICES: readonly ThemeChoice[] = ["system", "light", "dark"];

export function parseChoice(stored: string | null | undefined): ThemeChoice {
  return stored === "light" || stored === "dark" ? stored : "system";
}

export function resolveTheme(choice: ThemeChoice, prefersDark: boolean): Theme {
  return choice === "system" ? (prefersDark ? "dark" : "light") : choice;
}

/**
 * Runs inline in <head> before anything paints; it must not depend on the
 * bundle, so it restates parseChoice/resolveTheme in a few lines (the unit
 * test runs it against the functions above).
 */
export const THEME_BOOT_SCRIPT = `(function(){try{var c=localStorage.getItem(${JSON.stringify(THEME_STORAGE_KEY)});}catch(e){c=null}
if(c!=="light"&&c!=="dark")c="system";var d=c==="dark"||(c==="system"&&window.matchMedia("(prefers-color-scheme: dark)").matches);
var r=document.documentElement;r.setAttribute("data-theme",d?"dark":"light");r.setAttribute("data-theme-choice",c);r.style.colorScheme=d?"dark":"light";})();`;

export interface ThemeState {
  choice: ThemeChoice;
  theme: Theme;
}

type Listener = () => void;

/** The page's theme as a store (useSyncExternalStore): follows the system setting live while the choice is "system". */
export class ThemeStore {
  private state: ThemeState;
  private readonly listeners = new Set<Listener>();
  private media: MediaQueryList | null = null;

  constructor(
    private readonly storage: Pick<Storage, "getItem" | "setItem"> | null,
    private readonly root: HTMLElement | null,
    matchMedia: ((query: string) => MediaQueryList) | null,
  ) {
    const choice = parseChoice(safeGet(storage));
    this.media = matchMedia?.("(prefers-color-scheme: dark)") ?? null;
    this.state = { choice, theme: resolveTheme(choice, this.media?.matches ?? false) };
    this.media?.addEventListener("change", () => this.apply(this.state.choice));
  }

  readonly getState = (): ThemeState => this.state;

  readonly subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  choose(choice: ThemeChoice): void {
    try {
      this.storage?.setItem(THEME_STORAGE_KEY, choice);
    } catch (err) {
      // Storage refused (private mode, quota): the choice still applies to this page.
      if (!(err instanceof DOMException)) throw err;
    }
    this.apply(choice);
  }

  private apply(choice: ThemeChoice): void {
    const theme = resolveTheme(choice, this.media?.matches ?? false);
    this.root?.setAttribute("data-theme", theme);
    this.root?.setAttribute("data-theme-choice", choice);
    if (this.root) this.root.style.colorScheme = theme;
    if (theme === this.state.theme && choice === this.state.choice) return;
    this.state = { choice, theme };
    for (const listener of this.listeners) listener();
  }
}

function safeGet(storage: Pick<Storage, "getItem"> | null): string | null {
  try {
    return storage?.getItem(THEME_STORAGE_KEY) ?? null;
  } catch (err) {
    if (err instanceof DOMException) return null;
    throw err;
  }
}

let pageStore: ThemeStore | null = null;
const serverState: ThemeState = { choice: "system", theme: "light" };

/** The browser page's one store (created on first use); on the server, a fixed light state. */
export function themeStore(): ThemeStore | null {
  if (typeof window === "undefined") return null;
  pageStore ??= new ThemeStore(storageOrNull(), document.documentElement, window.matchMedia?.bind(window) ?? null);
  return pageStore;
}

export function serverThemeState(): ThemeState {
  return serverState;
}

function storageOrNull(): Storage | null {
  try {
    return window.localStorage;
  } catch (err) {
    if (err instanceof DOMException) return null;
    throw err;
  }
}
