/**
 * nginx in front of the lab: round-robin over its lab servers, WebSocket
 * upgrades passed through, no sticky sessions (the lab's sockets are
 * WebSocket only, so a connection stays on the server it reached). One
 * source for the one-command cluster (scripts/cluster.sh), the tests, and a
 * server install with TLS (deploy/README.md).
 *
 *   npx tsx scripts/nginx-conf.ts <listen-port> <dir> <upstream-port>...
 *       a whole nginx.conf for a private nginx on loopback (cluster.sh, tests)
 *   npx tsx scripts/nginx-conf.ts site --server-name lab.example.com \
 *       --certificate /etc/letsencrypt/live/lab.example.com/fullchain.pem \
 *       --key /etc/letsencrypt/live/lab.example.com/privkey.pem <upstream-port>...
 *       a site for the system's nginx (/etc/nginx/conf.d/mgpulab.conf):
 *       HTTPS on 443, plain HTTP on 80 redirected to it
 */
import path from "node:path";
import { parseArgs } from "node:util";

export interface SiteOptions {
  /** Lab servers on this machine's loopback, by port. */
  upstreams: number[];
  /** What nginx listens on for plain HTTP (`127.0.0.1:3000`, `80`). */
  listen: string;
  /** The public name (server_name); default: any. */
  serverName?: string;
  /**
   * HTTPS: nginx listens on `listen` with TLS, and `redirectFrom` (plain
   * HTTP) answers with a redirect to it. The lab's cookies are then Secure
   * (its public origin in MGPULAB_ALLOWED_ORIGINS is https://).
   */
  tls?: { certificate: string; key: string; redirectFrom?: string };
}

/** The lab's part of nginx's `http` block: the upgrade map, the upstream, and the server(s). */
export function nginxSite(options: SiteOptions): string {
  const name = options.serverName ? `\n    server_name ${options.serverName};` : "";
  const tls = options.tls;
  const redirect = tls?.redirectFrom
    ? `  server {
    listen ${tls.redirectFrom};${name}
    return 301 https://$host$request_uri;
  }
`
    : "";
  const tlsLines = tls
    ? `
    ssl_certificate ${tls.certificate};
    ssl_certificate_key ${tls.key};
    # Mozilla's "intermediate" profile: TLS 1.2 and 1.3 only.
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_prefer_server_ciphers off;
    ssl_session_timeout 1d;
    ssl_session_cache shared:mgpulab_tls:10m;
    ssl_session_tickets off;
    add_header Strict-Transport-Security "max-age=63072000" always;`
    : "";
  return `  map $http_upgrade $mgpulab_connection_upgrade { default upgrade; '' close; }
  upstream mgpulab {
${options.upstreams.map((upstream) => `    server 127.0.0.1:${upstream} max_fails=1 fail_timeout=2s;`).join("\n")}
  }
${redirect}  server {
    listen ${options.listen}${tls ? " ssl" : ""};${name}${tlsLines}
    client_max_body_size 64m;
    location / {
      proxy_pass http://mgpulab;
      proxy_http_version 1.1;
      # WebSocket: the upgrade passes through; a long-lived socket is not cut after a minute.
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $mgpulab_connection_upgrade;
      proxy_read_timeout 1h;
      # The lab checks Host and Origin against its public origin (MGPULAB_ALLOWED_ORIGINS).
      proxy_set_header Host $http_host;
      # A forwarded request is never "this machine" to the lab: /metrics then needs MGPULAB_METRICS_TOKEN.
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      # A server that is down is skipped: the next one answers.
      proxy_next_upstream error timeout http_502;
      proxy_connect_timeout 2s;
    }
  }
`;
}

/** A whole nginx.conf for a private nginx in `dir` (its pid and temp files there), on loopback. */
export function nginxConf(port: number, upstreams: number[], dir: string, site: Partial<SiteOptions> = {}): string {
  const temp = path.join(dir, "temp");
  return `worker_processes 1;
pid ${path.join(dir, "nginx.pid")};
${process.getuid?.() === 0 ? "user root;\n" : ""}events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${temp}/body;
  proxy_temp_path ${temp}/proxy;
  fastcgi_temp_path ${temp}/fastcgi;
  uwsgi_temp_path ${temp}/uwsgi;
  scgi_temp_path ${temp}/scgi;
${nginxSite({ listen: `127.0.0.1:${port}`, ...site, upstreams })}}
`;
}

function main(argv: string[]): number {
  if (argv[0] === "site") {
    const { values, positionals } = parseArgs({
      args: argv.slice(1),
      allowPositionals: true,
      options: { "server-name": { type: "string" }, certificate: { type: "string" }, key: { type: "string" }, listen: { type: "string" }, "http-listen": { type: "string" } },
    });
    const serverName = values["server-name"];
    if (!serverName || !values.certificate || !values.key || positionals.length === 0) {
      process.stderr.write("usage: nginx-conf.ts site --server-name NAME --certificate FULLCHAIN.pem --key PRIVKEY.pem [--listen 443] [--http-listen 80] <upstream-port>...\n");
      return 2;
    }
    const tls = { certificate: values.certificate, key: values.key, redirectFrom: values["http-listen"] ?? "80" };
    process.stdout.write(`# Multi-GPU Lab behind nginx with TLS (scripts/nginx-conf.ts site; deploy/README.md). Goes in nginx's http block: /etc/nginx/conf.d/mgpulab.conf\n${nginxSite({ upstreams: positionals.map(Number), listen: values.listen ?? "443", serverName, tls })}`);
    return 0;
  }
  const [port, dir, ...upstreams] = argv;
  if (!port || !dir || upstreams.length === 0) {
    process.stderr.write("usage: nginx-conf.ts <listen-port> <dir> <upstream-port>...   |   nginx-conf.ts site --server-name NAME --certificate … --key … <upstream-port>...\n");
    return 2;
  }
  process.stdout.write(nginxConf(Number(port), upstreams.map(Number), path.resolve(dir)));
  return 0;
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
