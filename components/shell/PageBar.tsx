/** The top line of a signed-in page: the way back to the notebooks (or the page's own title) and the user menu. */
import Link from "next/link";
import type { ReactNode } from "react";
import ThemeToggle from "./ThemeToggle";
import UserMenu from "./UserMenu";

import "./PageBar.css";

interface Props {
  /** What stands at the left instead of "← Notebooks" (the notebook list's own page). */
  children?: ReactNode;
}

export default function PageBar({ children }: Props) {
  return (
    <div className="page-bar">
      {children ?? (
        <Link href="/" className="brand" data-testid="back-to-list">
          ← Notebooks
        </Link>
      )}
      <span className="page-bar-end">
        <ThemeToggle />
        <UserMenu />
      </span>
    </div>
  );
}
