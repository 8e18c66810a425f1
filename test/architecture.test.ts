/**
 * The shape of the house (docs/architecture.md), checked on every test run:
 * - imports between `src/` folders follow the allowed graph below (arrows run one way, from `cli/` and
 *   `main.ts` down to `model/` and the shared leaves), so no folder cycle can come back;
 * - inside `gateway/`, `rpc/` imports neither `http/` nor `upstream/`, and `http/` and `upstream/` do not
 *   import each other: only `gateway/gateway.ts` wires the three layers;
 * - `http1/` and `outbound/` import only `node:` modules (and their own files); code outside `http1/`
 *   imports it only through `http1/index.ts`;
 * - no two classes, interfaces, types or enums share a name in `src/`;
 * - no source file is over 400 lines unless it is listed in LONG_FILES with its reason.
 * Unit tests beside the code (`*.test.ts`) are not part of the graph: they may reach test helpers.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { describe, test } from 'node:test';

const SRC = join(import.meta.dirname, '..', 'src');

/** Shared leaves: any folder may import them (except the node-only packages below). */
const LEAVES = ['errors', 'log', 'clock', 'metrics'];

/** What each folder (or root module) may import besides itself and the leaves. */
const ALLOWED: Record<string, readonly string[]> = {
  main: [
    'cli',
    'cluster',
    'api',
    'devnet',
    'notifications',
    'pools',
    'gateway',
    'health',
    'accounts',
    'keys',
    'routing',
    'chain',
    'incidents',
    'ledger',
    'limits',
    'stats',
    'outbound',
    'http1',
    'config',
    'model',
    'store',
    'secrets',
  ],
  cli: ['main', 'accounts', 'keys', 'pools', 'config', 'model', 'store', 'secrets'],
  // gateway/: only rpc/json-members.ts (duplicate members in request bodies, on the gateway's lexer).
  api: [
    'gateway',
    'accounts',
    'keys',
    'pools',
    'health',
    'notifications',
    'incidents',
    'stats',
    'chain',
    'ledger',
    'outbound',
    'config',
    'model',
    'store',
  ],
  devnet: ['notifications', 'pools', 'config', 'model', 'store'],
  // Secrets at rest (SPEC §16): the key, the start step and rotation re-seal every table that holds secrets.
  secrets: ['pools', 'health', 'notifications', 'config', 'model', 'store'],
  notifications: ['health', 'incidents', 'ledger', 'pools', 'outbound', 'config', 'model', 'store'],
  incidents: ['chain', 'config', 'model', 'store'],
  // The transaction ledger (SPEC §19): follows the tracker's chain, asks origins through model/origin-calls.ts.
  ledger: ['chain', 'config', 'model', 'store'],
  pools: ['health', 'accounts', 'config', 'model', 'store'],
  gateway: ['routing', 'chain', 'verify', 'http1', 'outbound', 'config', 'model'],
  // Gateway workers (SPEC §11): the control side wires the gateway's tracker; workers serve the gateway.
  cluster: ['gateway', 'limits', 'routing', 'chain', 'http1', 'outbound', 'config', 'model'],
  health: ['http1', 'outbound', 'config', 'model', 'store'],
  accounts: ['model', 'store'],
  keys: ['model', 'store'],
  // The operator console (SPEC §13) runs in the browser: a client of the API over HTTP, it imports nothing of src/.
  console: [],
  // Per-origin statistics (SPEC §13): the store side of the gateway's counters (gateway/origin-stats.ts).
  stats: ['model', 'store'],
  routing: ['chain', 'model'],
  chain: ['model'],
  // Verification primitives (SPEC §18): pure checks over JSON-RPC answers and the ethereumjs libraries.
  verify: ['model'],
  // Global limits (SPEC §11): backends of the gateway's lease, quota and affinity ports (rpc/lease-backend.ts,
  // rpc/quota-backend.ts, upstream/affinity-share.ts).
  limits: ['gateway', 'model'],
  config: ['outbound', 'model'],
  store: ['model'],
  model: [],
  // Node-only packages (NODE_ONLY) and leaves import no other folder of src/.
  http1: [],
  outbound: [],
  errors: [],
  log: [],
  clock: [],
  metrics: [],
};

/** The one gateway/ module api/ may import: the duplicate-member finder its body reader shares. */
const API_GATEWAY_IMPORT = 'gateway/rpc/json-members.ts';

/** Packages that import only `node:` modules and their own files. */
const NODE_ONLY = new Set(['http1', 'outbound']);

/** Files allowed over 400 lines, each with the reason it stays one file. */
const LONG_FILES: Record<string, string> = {};

const MAX_LINES = 400;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (entry.endsWith('.ts') && !entry.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const FILES = sourceFiles(SRC).map((path) => ({
  path,
  rel: relative(SRC, path).split(sep).join('/'),
  text: readFileSync(path, 'utf8'),
}));

/** `main` for src/main.ts, `gateway` for src/gateway/…: the unit the graph is drawn between. */
function folderOf(rel: string): string {
  const first = rel.split('/')[0] as string;
  return first.endsWith('.ts') ? first.slice(0, -3) : first;
}

/** Every module specifier of static imports, re-exports and dynamic `import('…')` (type positions too). */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|\s)(?:import|export)\s[^;'"]*?from\s*['"]([^'"]+)['"]/gm)) {
    found.push(match[1] as string);
  }
  for (const match of text.matchAll(/(?:^|\s)import\s*['"]([^'"]+)['"]/gm)) found.push(match[1] as string);
  for (const match of text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(match[1] as string);
  return found;
}

/** The import's target relative to src/ (`gateway/rpc/handler.ts`), or undefined for packages. */
function target(fromRel: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const joined = normalize(join(dirname(fromRel), specifier))
    .split(sep)
    .join('/');
  return joined.replace(/\.js$/, '.ts');
}

describe('architecture', () => {
  test('imports between src/ folders follow the allowed graph', () => {
    const wrong: string[] = [];
    for (const file of FILES) {
      const from = folderOf(file.rel);
      const allowed = ALLOWED[from];
      assert.ok(allowed !== undefined, `src/${file.rel}: folder "${from}" is missing from ALLOWED`);
      for (const specifier of specifiers(file.text)) {
        const to = target(file.rel, specifier);
        if (to === undefined) continue;
        const toFolder = folderOf(to);
        if (toFolder === from) continue;
        const leafOk = LEAVES.includes(toFolder) && !NODE_ONLY.has(from);
        if (!leafOk && !allowed.includes(toFolder)) wrong.push(`src/${file.rel} → src/${to}`);
      }
    }
    assert.deepEqual(wrong, [], 'imports against the allowed graph (docs/architecture.md)');
  });

  test('gateway layers: rpc/ knows neither http/ nor upstream/; only gateway.ts wires them', () => {
    // upstream/ implements rpc/'s Forwarder port, http/ and ws/ serve rpc/'s handler, and subscriptions/
    // calls origins through that Forwarder port with calls built by rpc/request.ts: all may import rpc/.
    const RPC_CLIENTS = new Set(['upstream', 'http', 'ws', 'subscriptions']);
    const layerOf = (rel: string) => (rel.split('/').length > 2 ? rel.split('/')[1] : 'root');
    const wrong: string[] = [];
    for (const file of FILES.filter((f) => f.rel.startsWith('gateway/'))) {
      const from = layerOf(file.rel);
      for (const specifier of specifiers(file.text)) {
        const to = target(file.rel, specifier);
        if (to === undefined || !to.startsWith('gateway/')) continue;
        const layer = layerOf(to);
        if (layer === from || layer === 'root' || from === 'root') continue;
        if (layer === 'rpc' && from !== undefined && RPC_CLIENTS.has(from)) continue;
        // ws/ is the listener's WebSocket edge beside http/: it shares http/'s path and API keys.
        if (from === 'ws' && layer === 'http') continue;
        wrong.push(`src/${file.rel} → src/${to}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  test('http1/ and outbound/ import only node: modules; others reach http1/ through its index (api/ gateway/ through one file)', () => {
    const wrong: string[] = [];
    for (const file of FILES) {
      const from = folderOf(file.rel);
      for (const specifier of specifiers(file.text)) {
        const to = target(file.rel, specifier);
        if (NODE_ONLY.has(from)) {
          const inside = to !== undefined && folderOf(to) === from;
          if (!inside && !specifier.startsWith('node:')) wrong.push(`src/${file.rel} imports ${specifier}`);
        } else if (to !== undefined && folderOf(to) === 'http1' && to !== 'http1/index.ts') {
          wrong.push(`src/${file.rel} imports src/${to} (use src/http1/index.ts)`);
        } else if (from === 'api' && to !== undefined && folderOf(to) === 'gateway' && to !== API_GATEWAY_IMPORT) {
          wrong.push(`src/${file.rel} imports src/${to} (api/ reaches gateway/ only through ${API_GATEWAY_IMPORT})`);
        }
      }
    }
    assert.deepEqual(wrong, []);
  });

  test('no two classes, interfaces, types or enums share a name', () => {
    const seen = new Map<string, string>();
    const clashes: string[] = [];
    for (const file of FILES) {
      for (const match of file.text.matchAll(
        /^(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(?:class|interface|type|enum)\s+([A-Za-z0-9_]+)/gm,
      )) {
        const name = match[1] as string;
        const first = seen.get(name);
        if (first !== undefined && first !== file.rel) clashes.push(`${name}: src/${first} and src/${file.rel}`);
        else seen.set(name, file.rel);
      }
    }
    assert.deepEqual(clashes, []);
  });

  test('time is read through the injected Clock, except in clock.ts, http1/, devnet/ and the browser console', () => {
    // http1/ measures its own exchanges and timeouts; devnet/ runs local nodes; console/ runs in a browser.
    const free = (rel: string) => rel === 'clock.ts' || /^(http1|devnet|console)\//.test(rel);
    const reads = FILES.filter((file) => !free(file.rel)).flatMap((file) =>
      [...file.text.matchAll(/\b(?:Date\.now|performance\.now|process\.hrtime)\b|new Date\(\)/g)].map(
        (match) => `src/${file.rel}: ${match[0]}`,
      ),
    );
    assert.deepEqual(reads, [], 'read time with clock.now() (dates) or clock.monotonic() (durations)');
  });

  test(`no source file over ${MAX_LINES} lines without a written reason`, () => {
    const long = FILES.filter((file) => file.text.split('\n').length > MAX_LINES && !(file.rel in LONG_FILES)).map(
      (file) => `src/${file.rel} (${file.text.split('\n').length} lines)`,
    );
    assert.deepEqual(long, []);
    for (const rel of Object.keys(LONG_FILES)) {
      const file = FILES.find((f) => f.rel === rel);
      assert.ok(file !== undefined, `LONG_FILES names src/${rel}, which no longer exists`);
      assert.ok(file.text.split('\n').length > MAX_LINES, `src/${rel} is no longer long: drop it from LONG_FILES`);
    }
  });
});
