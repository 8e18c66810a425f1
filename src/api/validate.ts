/**
 * Turns zod validation failures into the API's 400 / 1002 error: the message names the field (as a
 * dotted path, e.g. `origins.1.weight`) and what is allowed; `source.pointer` carries the JSON pointer.
 */
import type { z } from 'zod';
import { SwitchyardError } from '../errors/base.js';

export function validateBody<T>(schema: z.ZodType<T>, value: unknown): T {
  // reportInput: an issue carries `input` unless the value was absent, which tells "is required" apart
  // from "has the wrong type" (`null`, an array instead of an object, a number instead of a string).
  const parsed = schema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw validationError(parsed.error);
}

export function validationError(error: z.ZodError): SwitchyardError {
  const issue = error.issues[0];
  if (issue === undefined) return new SwitchyardError('API_VALIDATION', 'the request body is invalid');
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => [...path, key].join('.'));
    return new SwitchyardError('API_VALIDATION', `${keys.join(', ')}: unknown field; remove it`, {
      details: { pointer: jsonPointer([...path, issue.keys[0] ?? '']) },
    });
  }
  if (issue.code === 'invalid_key') {
    // A record key (e.g. a header name) was refused: name the record, quote the key, give the key's rule.
    const parent = path.slice(0, -1);
    const key = JSON.stringify(String(issue.path.at(-1) ?? '')).slice(0, 80);
    const rule = issue.issues[0]?.message ?? issue.message;
    return new SwitchyardError('API_VALIDATION', `${parent.join('.') || 'body'}: key ${key} is not allowed: ${rule}`, {
      details: { pointer: jsonPointer(path) },
    });
  }
  const field = path.length === 0 ? 'body' : path.join('.');
  const message = issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message;
  return new SwitchyardError('API_VALIDATION', `${field}: ${message}`, { details: { pointer: jsonPointer(path) } });
}

export function fieldError(field: string, message: string): SwitchyardError {
  return new SwitchyardError('API_VALIDATION', `${field}: ${message}`, {
    details: { pointer: jsonPointer(field.split('.')) },
  });
}

/** The JSON pointer (RFC 6901) of a path of member names and indexes. */
export function jsonPointer(path: readonly string[]): string {
  return `/${path.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** A query parameter holding an RFC 3339 date-time, as the store writes times (UTC, milliseconds). */
export function rfc3339Param(name: string, value: string): string {
  const ms = Date.parse(value);
  if (!RFC3339.test(value) || Number.isNaN(ms)) {
    throw fieldError(name, `"${value.slice(0, 40)}" is not an RFC 3339 date-time, e.g. 2026-01-31T00:00:00Z`);
  }
  return new Date(ms).toISOString();
}
