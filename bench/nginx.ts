/**
 * nginx in two roles, each a private instance with its own prefix directory (`-p`), config (`-c`),
 * `daemon off;` and `master_process off;` — never the system service:
 *  - the upstream: fixed JSON-RPC answers via `return 200 '…'`, and the 10 MiB body as a static file
 *    (POST to a static file is turned into a 200 by `error_page 405 =200 $uri`);
 *  - the reference proxy: a plain keep-alive reverse proxy in front of that upstream.
 * One worker process each, so the process we measure is the one doing the work, and so the reference
 * proxy gets the same single core a Node process gets.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Child } from './child.js';

export interface UpstreamRoutes {
  /** path → fixed body returned with `return 200` */
  fixed: Record<string, string>;
  /** path → file name (inside the prefix's `files/`) served as a static file */
  files: Record<string, string>;
}

function common(prefix: string): string {
  return `daemon off;
master_process off;
worker_processes 1;
error_log stderr warn;
pid ${join(prefix, 'nginx.pid')};
events { worker_connections 4096; }
`;
}

function temps(prefix: string): string {
  const tmp = join(prefix, 'tmp');
  return `client_body_temp_path ${tmp}; proxy_temp_path ${tmp}; fastcgi_temp_path ${tmp};
  uwsgi_temp_path ${tmp}; scgi_temp_path ${tmp};`;
}

/** nginx's `return` text is a quoted string with variables: refuse bodies that would be altered. */
function quoted(body: string): string {
  if (/['\\$]/.test(body)) throw new Error('an upstream body must not contain quote, backslash or $');
  return `'${body}'`;
}

export function upstreamConfig(prefix: string, port: number, routes: UpstreamRoutes): string {
  const fixed = Object.entries(routes.fixed)
    .map(([path, body]) => `    location = ${path} { default_type application/json; return 200 ${quoted(body)}; }`)
    .join('\n');
  const files = Object.entries(routes.files)
    .map(
      ([path, file]) =>
        `    location = ${path} { default_type application/json; alias ${join(prefix, 'files', file)}; error_page 405 =200 $uri; }`,
    )
    .join('\n');
  return `${common(prefix)}http {
  access_log off;
  ${temps(prefix)}
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  server {
    listen 127.0.0.1:${port} reuseport backlog=4096;
${fixed}
${files}
  }
}
`;
}

export function proxyConfig(prefix: string, port: number, upstreamPort: number): string {
  return `${common(prefix)}http {
  access_log off;
  ${temps(prefix)}
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  upstream origin {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port} backlog=4096;
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      # Usual tuning of a JSON-RPC proxy: batch bodies (~10 KiB) stay in memory instead of a temp file
      # (nginx's 8 KiB default would sendfile them upstream in a second segment and hit Nagle's 40 ms),
      # and large answers stream through memory buffers instead of spilling to temp files.
      client_body_buffer_size 1m;
      proxy_buffer_size 16k;
      proxy_buffers 16 64k;
      proxy_busy_buffers_size 128k;
      proxy_max_temp_file_size 0;
    }
  }
}
`;
}

export class Nginx {
  readonly port: number;
  readonly #child: Child;

  private constructor(port: number, child: Child) {
    this.port = port;
    this.#child = child;
  }

  /** Writes `files` into `<prefix>/files/`, the config into `<prefix>/nginx.conf`, and starts nginx. */
  static async start(options: {
    binary: string;
    name: string;
    prefix: string;
    port: number;
    config: string;
    files?: Record<string, string>;
  }): Promise<Nginx> {
    mkdirSync(join(options.prefix, 'tmp'), { recursive: true });
    mkdirSync(join(options.prefix, 'files'), { recursive: true });
    for (const [file, body] of Object.entries(options.files ?? {}))
      writeFileSync(join(options.prefix, 'files', file), body);
    const conf = join(options.prefix, 'nginx.conf');
    writeFileSync(conf, options.config);
    const child = new Child(options.name, options.binary, ['-p', `${options.prefix}/`, '-c', conf, '-e', 'stderr']);
    const nginx = new Nginx(options.port, child);
    try {
      await child.waitForPort(options.port);
    } catch (err) {
      await child.stop();
      throw err;
    }
    return nginx;
  }

  get pid(): number {
    return this.#child.pid;
  }

  stop(): Promise<void> {
    return this.#child.stop();
  }
}
