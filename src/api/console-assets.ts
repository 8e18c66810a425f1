/**
 * The operator console's files on the API listener (SPEC §13): `GET /` answers 302 to `/console/`,
 * `/console` 301 to `/console/`, `/console/` the page and `/console/<file>` its bundled script and
 * stylesheet — all built by `npm run build` (scripts/build-console.mjs, esbuild) into `dist/console/` and
 * served from the package, so it works offline. With `api.console: false` none of it exists (404).
 *
 * Files are read once, at the first request, and kept in memory with their gzip form (sent when the
 * client accepts gzip). Every answer carries a strict Content-Security-Policy — scripts, styles and
 * connections only from this origin, no inline script, no framing — plus `nosniff` and
 * `Referrer-Policy: no-referrer`. The page holds no secret: the token lives in the browser's
 * sessionStorage and is sent only as an `Authorization` header, never in a URL, so it cannot reach a log.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const CONSOLE_PATH = '/console/';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
}

/** Where the built console is: beside the compiled API (dist/console), or dist/ of a source checkout. */
export function consoleDir(): string | undefined {
  const here = fileURLToPath(new URL('.', import.meta.url));
  for (const dir of [join(here, '..', 'console'), join(here, '..', '..', 'dist', 'console')]) {
    if (existsSync(join(dir, 'index.html')) && existsSync(join(dir, 'app.js'))) return dir;
  }
  return undefined;
}

export class ConsoleAssets {
  #assets: Map<string, Asset> | undefined;
  readonly #dir: () => string | undefined;

  constructor(dir: () => string | undefined = consoleDir) {
    this.#dir = dir;
  }

  /** True when the request was the console's (answered here); false leaves it to the API. */
  handle(req: IncomingMessage, res: ServerResponse, pathname: string): boolean {
    if (pathname !== '/' && pathname !== '/console' && !pathname.startsWith(CONSOLE_PATH)) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    if (pathname === '/' || pathname === '/console') {
      res.writeHead(pathname === '/' ? 302 : 301, { location: CONSOLE_PATH, 'content-length': '0' });
      res.end();
      return true;
    }
    const name = pathname === CONSOLE_PATH ? 'index.html' : pathname.slice(CONSOLE_PATH.length);
    const asset = this.#load().get(name);
    const headers: Record<string, string> = {
      'content-security-policy': CONSOLE_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'cache-control': 'no-cache',
    };
    if (asset === undefined) {
      const missing = this.#load().size === 0;
      res.writeHead(missing ? 503 : 404, { ...headers, 'content-type': 'text/plain; charset=utf-8' });
      res.end(missing ? 'The console is not built: run `npm run build`.\n' : 'Not found\n');
      return true;
    }
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? asset.gzip : asset.body;
    res.writeHead(200, {
      ...headers,
      'content-type': asset.type,
      'content-length': String(body.length),
      vary: 'accept-encoding',
      ...(gzip && { 'content-encoding': 'gzip' }),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  }

  #load(): Map<string, Asset> {
    if (this.#assets !== undefined) return this.#assets;
    const assets = new Map<string, Asset>();
    const dir = this.#dir();
    if (dir !== undefined) {
      for (const name of readdirSync(dir)) {
        const type = TYPES[extname(name)];
        if (type === undefined) continue;
        const body = readFileSync(join(dir, name));
        assets.set(name, { type, body, gzip: gzipSync(body, { level: 9 }) });
      }
    }
    // Not cached while missing: a build made after start-up is picked up.
    if (assets.size > 0) this.#assets = assets;
    return assets;
  }
}
