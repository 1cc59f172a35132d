// @ts-check
/**
 * Next.js config. The custom server (server/main.ts) wraps Next and socket.io
 * on one origin; this file only configures the bundler.
 *
 * Monaco is bundled from the local `monaco-editor` package (never a CDN) and
 * its editor worker is emitted as a separate chunk via
 * `new Worker(new URL(..., import.meta.url))` in components/notebook/monaco-setup.ts.
 */

/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // node-pty and friends are server-only; they are never bundled for the browser.
  serverExternalPackages: ["node-pty", "pino"],
};

module.exports = nextConfig;
