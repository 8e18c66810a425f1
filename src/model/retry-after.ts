/**
 * An HTTP `Retry-After` value (RFC 9110 §10.2.3) as milliseconds from `nowMs`: delay-seconds (`"120"`) or
 * an HTTP date (`"Wed, 21 Oct 2015 07:28:00 GMT"`). Undefined for anything else (an empty or garbled
 * value); a date already past is 0. Read where an origin answers 429 (SPEC §17: the gateway benches it
 * that long; the failsafe engine, gateway/upstream/failsafe/).
 */
export function retryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  // An IMF-fixdate (or its obsolete forms, which Date.parse also reads) names a day of the week first.
  if (!/^[A-Za-z]{3},? /.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
