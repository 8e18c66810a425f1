import { SwitchyardError } from '../errors/base.js';

/**
 * A small strict flag parser for the CLI: `--name value`, `--name=value` and boolean `--flag`.
 * Unknown flags and stray positional arguments are usage errors naming the offender.
 */
export interface FlagSpec {
  [name: string]: 'string' | 'boolean';
}

export type Flags<S extends FlagSpec> = { [K in keyof S]?: S[K] extends 'boolean' ? boolean : string };

export function parseFlags<S extends FlagSpec>(argv: string[], spec: S, command: string): Flags<S> {
  return parseArgs(argv, spec, command, []).flags;
}

/**
 * Flags plus exactly one plain argument per name in `positionals` (in any position between the flags),
 * e.g. `token revoke --account ID TOKEN_ID`. A missing argument is a usage error naming it; an extra one
 * is a usage error quoting it.
 */
export function parseArgs<S extends FlagSpec>(
  argv: string[],
  spec: S,
  command: string,
  positionals: readonly string[],
): { flags: Flags<S>; args: string[] } {
  const out: Record<string, string | boolean> = {};
  const args: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) {
      if (args.length >= positionals.length)
        throw new SwitchyardError('CLI_USAGE', `${command}: unexpected argument "${arg}"`);
      args.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const kind = spec[name];
    if (kind === undefined) {
      const known = Object.keys(spec).map((flag) => `--${flag}`);
      throw new SwitchyardError('CLI_USAGE', `${command}: unknown option --${name}; known: ${known.join(', ')}`);
    }
    if (kind === 'boolean') {
      if (eq !== -1) throw new SwitchyardError('CLI_USAGE', `${command}: --${name} takes no value`);
      out[name] = true;
      continue;
    }
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined || (eq === -1 && value.startsWith('--'))) {
      throw new SwitchyardError('CLI_USAGE', `${command}: --${name} needs a value`);
    }
    out[name] = value;
  }
  const missing = positionals[args.length];
  if (missing !== undefined) throw new SwitchyardError('CLI_USAGE', `${command}: ${missing} is required`);
  return { flags: out as Flags<S>, args };
}
