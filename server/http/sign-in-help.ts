/**
 * What a loopback lab without accounts shows a browser that has no session:
 * where to find the sign-in URL, and nothing of the lab. Plain HTML, no
 * script, so nothing else needs to be served for it.
 */
import type { ServerResponse } from "node:http";

/** `origin`: the lab's address as this request reached it (its Host header, checked by the request guard). */
export function signInHelpPage(res: ServerResponse, { spent, origin }: { spent: boolean; origin: string }): void {
  const spentLine = spent ? "<p><strong>That sign-in link was used already or has expired.</strong> Each link works once.</p>" : "";
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in · Multi-GPU Lab</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1d2433}code{background:#eef1f6;padding:.1rem .3rem;border-radius:4px}</style>
</head><body data-testid="sign-in-help">
<h1>Multi-GPU Lab</h1>
${spentLine}
<p>This lab runs on this machine for whoever started it. To open it, use the URL with a token that <code>npm start</code> printed in its terminal:</p>
<p><code>${escapeHtml(origin)}/api/auth/local-token?token=…</code></p>
<p>For a fresh link without restarting, run <code>npm run lab -- login-url</code> in the project's directory.</p>
</body></html>`;
  res.writeHead(401, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
  res.end(body);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
