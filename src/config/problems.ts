/**
 * What is wrong with a configuration, as the config check and `serve` print it: one problem per line,
 * `path: message` (paths dotted, `pools.0.name`; `(root)` for the file as a whole, `line N` for YAML
 * syntax). Errors stop a start; warnings do not (config/warnings.ts).
 */
import { SwitchyardError } from '../errors/base.js';
import type { ErrorCode } from '../errors/catalog.js';

export type ConfigErrorCode = Extract<
  ErrorCode,
  'CONFIG_INVALID' | 'CONFIG_UNKNOWN_KEY' | 'CONFIG_ENV_MISSING' | 'CONFIG_FILE_UNREADABLE'
>;

export interface ConfigWarning {
  path: string;
  message: string;
}

export interface ConfigProblem extends ConfigWarning {
  code: ConfigErrorCode;
}

export function problemLine(problem: ConfigWarning): string {
  return `${problem.path || '(root)'}: ${problem.message}`;
}

/**
 * The error a config with `problems` fails with: every problem, one per line after a first line naming
 * the source. Its code is the problems' code when they share one, else CONFIG_INVALID.
 */
export function configError(source: string, problems: readonly ConfigProblem[]): SwitchyardError {
  const first = problems[0];
  const code = first !== undefined && problems.every((p) => p.code === first.code) ? first.code : 'CONFIG_INVALID';
  const lines = problems.map(problemLine);
  const message =
    lines.length === 1
      ? `${source}: ${lines[0]}`
      : `${source}: ${lines.length} problems in the configuration:\n${lines.join('\n')}`;
  return new SwitchyardError(code, message, { details: { problems } });
}
