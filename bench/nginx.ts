/**
 * nginx in two roles, each a private instance with its own prefix directory (`-p`), config (`-c`),
 * `daemon off;` and `master_process off;` — never the system service:
 *  - the upstream: fixed JSON-RPC results that echo the request's id (Switchyard, like many proxies,
 *    sends its own id upstream and checks the answer carries it), made with the echo module that
 *    Debian's nginx-light brings: the id is pulled out of `$request_body` by a `map` regex; the 10 MiB
 *    result comes from a file through a subrequest; whole fixed bodies (a batch answer for the direct
 *    and nginx legs) are static files;
 *  - the reference proxy: a plain keep-alive reverse proxy in front of that upstream.
 * One worker process each, so the process we measure is the one doing the work, and so the reference
 * proxy gets the same single core a Node process gets.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Child } from './child.js';

export interface UpstreamRoutes {
  /**
   * path → JSON text of a fixed `result`; the answer echoes the request's id (as a real node does, and as
   * a proxy that rewrites ids on the way up needs): `{"jsonrpc":"2.0","id":<request id>,"result":…}`.
   */
  echo: Record<string, string>;
  /** Like `echo`, with the result read from a file (inside the prefix's `files/`), for large answers. */
  echoFile: Record<string, string>;
  /** path → file served as it is (a fixed body, e.g. a whole batch answer). */
  files: Record<string, string>;
}

function common(prefix: string, modules = ''): string {
  return `${modules}daemon off;
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

/**
 * A single-quoted nginx string. Variables expand in it, and strings over 4 KiB do not parse: refuse
 * text that would be altered (quote, backslash, or a $ other than the id variable) or cut.
 */
function quoted(text: string, withIdVariable = false): string {
  const plain = withIdVariable ? text.replaceAll('$rpc_id', '') : text;
  if (/['\\$]/.test(plain)) throw new Error(`an upstream answer must not contain quote, backslash or $: ${text}`);
  if (text.length > 4000) throw new Error('an upstream answer in nginx.conf must stay under 4 KiB; use a file');
  return `'${text}'`;
}

/** The echo module ships with Debian's nginx-light (libnginx-mod-http-echo); our -c config loads it itself. */
export const ECHO_MODULE = '/usr/lib/nginx/modules/ngx_http_echo_module.so';

export function upstreamConfig(prefix: string, port: number, routes: UpstreamRoutes): string {
  const lines: string[] = [];
  for (const [path, result] of Object.entries(routes.echo)) {
    lines.push(
      `    location = ${path} { echo_read_request_body; echo -n ${quoted(`{"jsonrpc":"2.0","id":$rpc_id,"result":${result}}`, true)}; }`,
    );
  }
  for (const [path, file] of Object.entries(routes.echoFile)) {
    lines.push(
      `    location = ${path} { echo_read_request_body; echo -n ${quoted('{"jsonrpc":"2.0","id":$rpc_id,"result":', true)}; ` +
        `echo_location_async /files/${file}; echo -n '}'; }`,
    );
  }
  for (const [path, file] of Object.entries(routes.files)) {
    // POST to a static file is a 405 in nginx; turning that into the file itself is the usual trick.
    lines.push(`    location = ${path} { alias ${join(prefix, 'files', file)}; error_page 405 =200 $uri; }`);
  }
  return `${common(prefix, `load_module ${ECHO_MODULE};\n`)}http {
  access_log off;
  ${temps(prefix)}
  default_type application/json;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  # The request body stays in one memory buffer so $request_body (and so the id) can be read.
  client_body_buffer_size 64k;
  client_body_in_single_buffer on;
  map $request_body $rpc_id {
    default 'null';
    '~"id"\\s*:\\s*(?<id>-?[0-9]+|"[^"]*"|null)' $id;
  }
  server {
    listen 127.0.0.1:${port} reuseport backlog=4096;
    location /files/ { internal; root ${prefix}; }
${lines.join('\n')}
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
