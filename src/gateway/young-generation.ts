/**
 * The size of V8's young generation in a process that serves the gateway listener
 * (`gateway.semi_space_mib`, default 64; 0 keeps V8's own default, 16 MiB on 64-bit).
 *
 * Why: a request's objects (parsed elements, spans, answers) live for one round trip to an origin.
 * With many requests in flight, V8's default semi-spaces fill before those round trips end, so the
 * objects are copied to the old generation and collected there by the costly full collections. In the
 * batch leg of `npm run bench` the collector took 23 % of the gateway's CPU with 16 MiB and 6–8 % with
 * 64 MiB (docs/benchmarks.md, "Batches"). The cost is memory: up to three semi-spaces of that size.
 *
 * V8 reads the limit whenever the young generation grows, so setting it at start, before load, takes
 * effect. An explicit `--max-semi-space-size` on the command line or in NODE_OPTIONS wins.
 */
import { setFlagsFromString } from 'node:v8';

const FLAG = '--max-semi-space-size';

/**
 * Applies `semiSpaceMib` unless it is 0 or the process was started with the flag (`given`: its
 * command-line and NODE_OPTIONS arguments). Answers whether it set the flag.
 */
export function sizeYoungGeneration(
  semiSpaceMib: number,
  given: readonly string[] = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)],
  set: (flags: string) => void = setFlagsFromString,
): boolean {
  if (semiSpaceMib === 0 || given.some((arg) => arg.startsWith(FLAG))) return false;
  set(`${FLAG}=${semiSpaceMib}`);
  return true;
}
