import type { Metadata } from "next";
import { headers } from "next/headers";
import { connection } from "next/server";
import type { ReactNode } from "react";
import SessionEndedBanner from "@/components/account/SessionEndedBanner";
import { THEME_BOOT_SCRIPT } from "@/components/shell/model/theme";
import "./globals.css";

export const metadata: Metadata = {
  title: "Multi-GPU Lab",
  description: "Guided, measured experiments on PyTorch multi-GPU training",
};

/** The request's CSP nonce (server/http/security-headers.ts puts the policy on the request too). */
async function scriptNonce(): Promise<string | undefined> {
  const policy = (await headers()).get("content-security-policy") ?? "";
  return /'nonce-([^']+)'/.exec(policy)?.[1];
}

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page renders per request: its scripts carry that response's CSP
  // nonce (server/http/security-headers.ts), which a prerendered page cannot.
  await connection();
  const nonce = await scriptNonce();
  return (
    // The theme script sets data-theme on <html> before React hydrates: the attributes differ on purpose.
    <html lang="en" suppressHydrationWarning>
      <head>
        {/* Before the first paint: a dark page never flashes white (components/shell/model/theme.ts). */}
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: THEME_BOOT_SCRIPT }} />
      </head>
      <body>
        {children}
        <SessionEndedBanner />
      </body>
    </html>
  );
}
