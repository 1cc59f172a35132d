"use client";
/**
 * Idle shutdown is about to end this notebook's kernel (nothing running, no
 * GPU use, nobody viewing it for the lab's period): say when, and what keeps
 * it. Any use — running a cell, or this tab being visible — clears it.
 */
import "./IdleShutdownBanner.css";

export default function IdleShutdownBanner({ shutdownAt }: { shutdownAt: string }) {
  const at = new Date(shutdownAt);
  const time = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return (
    <div className="idle-banner" data-testid="idle-shutdown-banner" role="status">
      This kernel has been idle (nothing running, no GPU use, nobody viewing) and will be shut down at <time dateTime={shutdownAt}>{time}</time> to free its
      host. Run a cell or keep this tab open to keep it.
    </div>
  );
}
