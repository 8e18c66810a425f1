/**
 * Keeps the error catalog and docs/errors.md in step: every catalog code has a row in the docs, with
 * the same HTTP status and JSON-RPC or v4 code, and the docs list no code the catalog lacks.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CATALOG, type ErrorSpec } from './catalog.js';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const rows = new Map<string, string[]>();
for (const line of doc.split('\n')) {
  const match = /^\|\s*`([A-Z0-9_]+)`\s*\|(.*)\|\s*$/.exec(line);
  if (match)
    rows.set(
      match[1] as string,
      (match[2] as string).split('|').map((cell) => cell.trim()),
    );
}

describe('error catalog ↔ docs/errors.md', () => {
  for (const [code, spec] of Object.entries(CATALOG) as Array<[string, ErrorSpec]>) {
    it(`documents ${code}`, () => {
      const row = rows.get(code);
      assert.ok(row, `docs/errors.md has no row for \`${code}\``);
      const [http, wireCode] = row;
      if (spec.rpc !== undefined) {
        assert.equal(http, String(spec.http), `${code}: HTTP status`);
        assert.equal(wireCode, String(spec.rpc), `${code}: JSON-RPC code`);
      } else if (spec.v4 !== undefined) {
        assert.equal(http, String(spec.http), `${code}: HTTP status`);
        assert.equal(wireCode, String(spec.v4), `${code}: v4 code`);
      }
      assert.ok((row[2] ?? '').length > 10, `${code}: a meaning is written`);
    });
  }

  it('documents no code that is not in the catalog', () => {
    const unknown = [...rows.keys()].filter((code) => !Object.hasOwn(CATALOG, code));
    assert.deepEqual(unknown, []);
  });
});
