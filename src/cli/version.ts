/**
 * `switchyard --version`: `switchyard 0.1.0 (commit 1a2b3c4d5e6f)`, or the version alone for an install
 * that is no git checkout (metrics/build-info.ts reads both, for /metrics too).
 */
import { buildIdentity } from '../metrics/build-info.js';

export function versionLine(): string {
  const { version, commit } = buildIdentity();
  return `switchyard ${version}${commit === undefined ? '' : ` (commit ${commit})`}`;
}
