/**
 * The load balancer in front of several lab servers: nginx, round-robin,
 * WebSocket upgrades passed through, no sticky sessions (the lab's sockets
 * are WebSocket only, so a connection stays on the server it reached). One
 * source for the one-command cluster (scripts/cluster.sh) and the tests.
 *
 *   npx tsx scripts/nginx-conf.ts <listen-port> <dir> <upstream-port>...   prints the configuration
 */
import path from "node:path";

export function nginxConf(port: number, upstreams: number[], dir: string): string {
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
  map $http_upgrade $connection_upgrade { default upgrade; '' close; }
  upstream lab {
${upstreams.map((upstream) => `    server 127.0.0.1:${upstream} max_fails=1 fail_timeout=2s;`).join("\n")}
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 64m;
    location / {
      proxy_pass http://lab;
      proxy_http_version 1.1;
      # WebSocket: the upgrade passes through; a long-lived socket is not cut after a minute.
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_read_timeout 1h;
      # The lab checks Host and Origin against its public origin (MGPULAB_ALLOWED_ORIGINS).
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      # A server that is down is skipped: the next one answers.
      proxy_next_upstream error timeout http_502;
      proxy_connect_timeout 2s;
    }
  }
}
`;
}

if (require.main === module) {
  const [port, dir, ...upstreams] = process.argv.slice(2);
  if (!port || !dir || upstreams.length === 0) {
    process.stderr.write("usage: nginx-conf.ts <listen-port> <dir> <upstream-port>...\n");
    process.exit(2);
  }
  process.stdout.write(nginxConf(Number(port), upstreams.map(Number), path.resolve(dir)));
}
