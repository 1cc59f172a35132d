"use client";
/** The page's theme for components (the store is in model/theme.ts); Monaco's theme name follows it. */
import { useSyncExternalStore } from "react";
import { serverThemeState, themeStore, type ThemeState } from "./model/theme";

const noop = (): (() => void) => () => undefined;

export function useTheme(): ThemeState {
  const store = themeStore();
  return useSyncExternalStore(store?.subscribe ?? noop, store?.getState ?? serverThemeState, serverThemeState);
}

/** "vs" or "vs-dark": Monaco's built-in themes, switched with the page. */
export function useEditorTheme(): string {
  return useTheme().theme === "dark" ? "vs-dark" : "vs";
}
