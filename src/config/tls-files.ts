/**
 * The PEM certificate and key a listener's `tls: {cert_file, key_file}` names (`gateway.tls`,
 * `api.tls`), read from disk when the listener starts and again at every reload (SPEC §15: certificate
 * rotation). The pair is checked by making a TLS context of it, so a reload whose files are unreadable,
 * not PEM, or a key that does not match its certificate fails as a whole before anything changes.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { ConfigProblem } from './problems.js';

export interface TlsFiles {
  readonly cert_file: string;
  readonly key_file: string;
}

/** A certificate chain and its private key, as PEM bytes. */
export interface TlsPair {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Reads and checks the pair; throws an Error naming the file and the reason. */
export function readTlsPair(files: TlsFiles): TlsPair {
  const pair = { cert: readPem(files.cert_file), key: readPem(files.key_file) };
  try {
    createSecureContext(pair);
  } catch (err) {
    const why = (err as Error).message;
    throw new Error(`${files.cert_file} and ${files.key_file} are not a usable certificate and key: ${why}`, {
      cause: err,
    });
  }
  return pair;
}

/** As `readTlsPair`, a failure answered as the config problem at `path` (e.g. `gateway.tls`). */
export function loadTlsPair(files: TlsFiles, path: string): { pair: TlsPair } | { problem: ConfigProblem } {
  try {
    return { pair: readTlsPair(files) };
  } catch (err) {
    return { problem: { code: 'CONFIG_INVALID', path, message: (err as Error).message } };
  }
}

function readPem(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { cause: err });
  }
}
