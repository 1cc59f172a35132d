import type { Metadata } from "next";
import { connection } from "next/server";
import type { ReactNode } from "react";
import SessionEndedBanner from "@/components/SessionEndedBanner";
import "./globals.css";

export const metadata: Metadata = {
  title: "Multi-GPU Lab",
  description: "Guided, measured experiments on PyTorch multi-GPU training",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page renders per request: its scripts carry that response's CSP
  // nonce (server/http/security-headers.ts), which a prerendered page cannot.
  await connection();
  return (
    <html lang="en">
      <body>
        {children}
        <SessionEndedBanner />
      </body>
    </html>
  );
}
