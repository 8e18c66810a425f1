/**
 * The one way secrets are sealed in the store: AES-256-GCM through `node:crypto`, a fresh random 96-bit
 * nonce per value, a 128-bit tag. A sealed value is text that names its format version and its key:
 *
 *     sy1:<key id>:<base64url(nonce ‖ ciphertext ‖ tag)>
 *
 * The key id is the first 8 bytes (16 hex characters) of HMAC-SHA256(key, "switchyard secrets key id"):
 * it says which key sealed a value (rotation, a wrong key at start) without saying anything about the key.
 * The additional authenticated data is `sy1:<key id>:<context>`, where the caller's context names the
 * row the value belongs to (`pools/<id>`, …): a sealed value copied into another row, or given another
 * key id, does not open.
 *
 * A key is 32 bytes, written as 64 hex characters or as base64 (standard or URL-safe, padding optional);
 * surrounding whitespace (a file's trailing newline) is ignored.
 *
 * `open` throws `SealedValueError` when a value is not in this format or fails authentication (a damaged
 * or moved value) — never returns an empty secret — and `KeyMismatchError` when another key sealed it.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

export const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'sy1';
const ENVELOPE = /^sy1:([0-9a-f]{16}):([A-Za-z0-9_-]+)$/;

/** A value that is not a sealed value of this format, or that does not open (damaged, moved, tampered). */
export class SealedValueError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'SealedValueError';
  }
}

/** A value sealed under another key than the one this box holds. */
export class KeyMismatchError extends Error {
  constructor(
    readonly sealedWith: string,
    readonly held: string,
  ) {
    super(`a secret is sealed with key ${sealedWith}, this process holds key ${held}`);
    this.name = 'KeyMismatchError';
  }
}

/** 32 random bytes: a new key. */
export function generateKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** How a key is written to a key file: 64 lowercase hex characters and a newline. */
export function formatKey(key: Buffer): string {
  return `${key.toString('hex')}\n`;
}

/** The key written as 64 hex characters or base64, or a message saying what is wrong (never the text). */
export function parseKey(text: string): { key: Buffer } | { problem: string } {
  const trimmed = text.trim();
  const wanted = `a ${KEY_BYTES}-byte key written as 64 hex characters or base64 (make one with: openssl rand -hex 32)`;
  if (trimmed === '') return { problem: `is empty; it must hold ${wanted}` };
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return { key: Buffer.from(trimmed, 'hex') };
  if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(trimmed)) {
    const key = Buffer.from(trimmed.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
    if (key.length === KEY_BYTES) return { key };
  }
  return { problem: `is not ${wanted}` };
}

/** The key id of a key (see the header). */
export function keyIdOf(key: Buffer): string {
  return createHmac('sha256', key).update('switchyard secrets key id').digest().subarray(0, 8).toString('hex');
}

/** The key id a sealed value names, or undefined when the text is not a sealed value. */
export function sealedKeyId(value: string): string | undefined {
  return ENVELOPE.exec(value)?.[1];
}

/** Seals and opens values under one key (see the header). */
export class SecretBox {
  readonly #key: Buffer;
  readonly keyId: string;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new RangeError(`a secrets key is ${KEY_BYTES} bytes, not ${key.length}`);
    this.#key = Buffer.from(key);
    this.keyId = keyIdOf(key);
  }

  seal(plain: string, context: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(this.#aad(context));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const sealed = Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
    return `${VERSION}:${this.keyId}:${sealed}`;
  }

  open(value: string, context: string): string {
    const match = ENVELOPE.exec(value);
    if (match === null) throw new SealedValueError('not a sealed value');
    const keyId = match[1] as string;
    if (keyId !== this.keyId) throw new KeyMismatchError(keyId, this.keyId);
    const raw = Buffer.from(match[2] as string, 'base64url');
    if (raw.length < NONCE_BYTES + TAG_BYTES) throw new SealedValueError('a sealed value is truncated');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, NONCE_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(this.#aad(context));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch (err) {
      throw new SealedValueError(`a sealed value does not open (damaged, or moved from another row: ${context})`, {
        cause: err,
      });
    }
  }

  #aad(context: string): Buffer {
    return Buffer.from(`${VERSION}:${this.keyId}:${context}`, 'utf8');
  }
}
