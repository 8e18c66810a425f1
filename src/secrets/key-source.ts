/**
 * Where the secrets key comes from (SPEC §16): `SWITCHYARD_SECRETS_KEY` when it is set (it wins), else
 * the key file `secrets_key_file` (default `<data_dir>/secrets.key`; a relative path is taken from the
 * working directory, as `data_dir` is). A key is 32 bytes written as 64 hex characters or base64
 * (store/secret-box.ts).
 *
 * The key file is created only by the first start of a store that has no key recorded (secrets/open.ts):
 * 32 random bytes as hex, mode 0600, its directory created 0700 when missing, written and synced before
 * anything is sealed with it. A file other users may read is used, with a warning. A set but empty
 * variable, a file that cannot be read or does not hold a key are errors that name the variable or file
 * (CONFIG_SECRETS_KEY): never a new key in their place.
 *
 * `secrets rotate` writes the new key to `<file>.new` first and renames it over the key file once the
 * store is re-sealed; a start that finds the store sealed with the key in `<file>.new` finishes that
 * rename (a rotation interrupted between the two).
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { SwitchyardError } from '../errors/base.js';
import { formatKey, parseKey } from '../store/secret-box.js';

export const SECRETS_KEY_ENV = 'SWITCHYARD_SECRETS_KEY';
/** The new key `secrets rotate` re-seals under when the key comes from the environment. */
export const NEW_SECRETS_KEY_ENV = 'SWITCHYARD_SECRETS_KEY_NEW';
export const DEFAULT_KEY_FILE_NAME = 'secrets.key';

export type KeySource = { kind: 'env'; key: Buffer } | { kind: 'file'; path: string };

/** The config keys that say where the key file is. */
export interface KeyFileConfig {
  data_dir: string;
  secrets_key_file?: string | undefined;
}

export function keyFilePath(config: KeyFileConfig): string {
  return resolve(config.secrets_key_file ?? join(config.data_dir, DEFAULT_KEY_FILE_NAME));
}

function keyError(message: string, cause?: unknown): SwitchyardError {
  return new SwitchyardError('CONFIG_SECRETS_KEY', message, cause === undefined ? {} : { cause });
}

/** The key held by environment variable `name`, undefined when it is not set. */
export function keyFromEnv(env: NodeJS.ProcessEnv, name: string): Buffer | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const parsed = parseKey(value);
  if ('problem' in parsed) throw keyError(`${name} ${parsed.problem}`);
  return parsed.key;
}

export function keySource(config: KeyFileConfig, env: NodeJS.ProcessEnv): KeySource {
  const key = keyFromEnv(env, SECRETS_KEY_ENV);
  return key === undefined ? { kind: 'file', path: keyFilePath(config) } : { kind: 'env', key };
}

/** How messages name a source. */
export function describeSource(source: KeySource): string {
  return source.kind === 'env' ? SECRETS_KEY_ENV : `the key file ${source.path}`;
}

/** The key in `path`; undefined when the file does not exist. Throws CONFIG_SECRETS_KEY otherwise. */
export function readKeyFile(path: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw keyError(`the secrets key file ${path} cannot be read (${(err as NodeJS.ErrnoException).code})`, err);
  }
  const parsed = parseKey(text);
  if ('problem' in parsed) throw keyError(`the secrets key file ${path} ${parsed.problem}`);
  return parsed.key;
}

/** Like `readKeyFile`, but undefined instead of an error (re-reading a key file that may be mid-change). */
export function rereadKeyFile(path: string): Buffer | undefined {
  try {
    return readKeyFile(path);
  } catch {
    return undefined;
  }
}

/** True when group or others may read the file (a warning, not an error: some mounts cannot be 0600). */
export function readableByOthers(path: string): boolean {
  return (statSync(path).mode & 0o077) !== 0;
}

/**
 * Writes `key` to `path` (0600, synced, then its directory synced). `exclusive`: fails with EEXIST if the
 * file exists; the key is written to a temporary file first and linked into place, so a process starting
 * at the same moment never reads a half-written key file.
 */
export function writeKeyFile(path: string, key: Buffer, exclusive: boolean): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const target = exclusive ? `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp` : path;
  const fd = openSync(target, 'w', 0o600);
  try {
    writeSync(fd, formatKey(key));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (exclusive) {
    try {
      linkSync(target, path);
    } finally {
      unlinkSync(target);
    }
  }
  syncDirectory(dirname(path));
}

/** Moves `from` over `to` and makes the rename durable. */
export function replaceKeyFile(from: string, to: string): void {
  renameSync(from, to);
  syncDirectory(dirname(to));
}

export function pendingKeyFile(path: string): string {
  return `${path}.new`;
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
