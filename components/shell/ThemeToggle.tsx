"use client";
/** System / Light / Dark: the page's colour theme, remembered in this browser. */
import { parseChoice, THEME_CHOICES, themeStore, type ThemeChoice } from "./model/theme";
import { useTheme } from "./use-theme";

const LABELS: Record<ThemeChoice, string> = { system: "◐ System", light: "☀ Light", dark: "☾ Dark" };

export default function ThemeToggle() {
  const { choice } = useTheme();
  return (
    <select
      className="theme-toggle"
      data-testid="theme-toggle"
      aria-label="Colour theme"
      title="Colour theme (System follows your browser)"
      value={choice}
      onChange={(e) => themeStore()?.choose(parseChoice(e.target.value))}
    >
      {THEME_CHOICES.map((c) => (
        <option key={c} value={c}>
          {LABELS[c]}
        </option>
      ))}
    </select>
  );
}
