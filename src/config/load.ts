import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { crossCheck } from './cross-check.js';
import { OFFLINE_DEFAULT_CONFIG } from './defaults.js';
import { expandEnv } from './env.js';
import { issueProblems } from './issues.js';
import { applyOverrides, type CommandLineSettings, overriddenLabel, type SettingSources } from './overrides.js';
import { type ConfigParts, salvage, wholeParts } from './parts.js';
import { type ConfigProblem, configError } from './problems.js';
import { type Config, configSchema } from './schema.js';

/**
 * The config pipeline, the only way a Config comes to be:
 *   read file → parse YAML → (store-only commands: keep only the keys they use) → expand ${ENV}
 *   → command-line and SWITCHYARD_* overrides (overrides.ts) → strict schema (unknown keys are errors)
 *   → defaults → cross-field checks (cross-check.ts) → deep freeze.
 * Nothing stops at the first problem: every step after YAML goes on with what it has, and the result
 * lists every problem of the file at once, each with its path (`config check` prints them, `serve` and
 * the other commands fail with all of them). When the schema refuses parts of the file, the cross-checks
 * still look at every part that passed it (parts.ts).
 */
export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** `--gateway-listen`, `--api-listen`, `--data-dir` (they win over the SWITCHYARD_* variables). */
  settings?: CommandLineSettings;
  /**
   * Only these top-level keys are read; the others take their defaults, so a `${VAR}` in them may be
   * unset. For commands that use the store and little else (`token`, `key`, `account`, `config diff`).
   */
  only?: readonly string[];
}

export interface ConfigCheck {
  /** The file, or "(built-in defaults)". */
  source: string;
  /** The config, when there is no error. */
  config: Readonly<Config> | undefined;
  errors: ConfigProblem[];
  /** What parsed, for the warnings (warnings.ts); undefined when the file could not be read as YAML. */
  parts: ConfigParts | undefined;
  /** Where gateway.listen, api.listen and data_dir came from. */
  sources: SettingSources;
}

export const BUILT_IN_SOURCE = '(built-in defaults)';

/** Loads a config file (no file: the built-in offline defaults); fails with every problem it has. */
export function loadConfig(file: string | undefined, options: LoadOptions = {}): Readonly<Config> {
  return validConfig(checkConfig(file, options));
}

/** The checked config, or the error listing every problem of it. */
export function validConfig(check: ConfigCheck): Readonly<Config> {
  if (check.config === undefined) throw configError(check.source, check.errors);
  return check.config;
}

/** Runs the whole pipeline and reports every problem; never throws for a problem of the file. */
export function checkConfig(file: string | undefined, options: LoadOptions = {}): ConfigCheck {
  const env = options.env ?? process.env;
  const source = file ?? BUILT_IN_SOURCE;
  const read = file === undefined ? { tree: structuredClone(OFFLINE_DEFAULT_CONFIG) as unknown } : readYaml(file);
  const keep = (key: string) => options.only === undefined || options.only.includes(key);
  if ('errors' in read) {
    const sources = applyOverrides({}, options.settings ?? {}, env, undefined, keep);
    return { source, config: undefined, errors: read.errors, parts: undefined, sources };
  }
  const picked = isRecord(read.tree) && options.only !== undefined ? pick(read.tree, keep) : read.tree;
  const expanded = file === undefined ? { value: picked, missing: [] } : expandEnv(picked, env);
  const tree = expanded.value;
  const sources = applyOverrides(isRecord(tree) ? tree : {}, options.settings ?? {}, env, file, keep);
  const checked = checkTree(tree, sources, expanded.missing);
  return { source, ...checked, sources };
}

/** The pipeline after reading (schema, defaults, cross-checks, freeze), throwing. For tests and embedders. */
export function buildConfig(raw: unknown, source: string): Readonly<Config> {
  const checked = checkTree(raw, undefined, []);
  if (checked.config === undefined) throw configError(source, checked.errors);
  return checked.config;
}

function checkTree(
  tree: unknown,
  sources: SettingSources | undefined,
  missing: readonly ConfigProblem[],
): Pick<ConfigCheck, 'config' | 'errors' | 'parts'> {
  const parsed = configSchema.safeParse(tree, { reportInput: true });
  const parts = parsed.success ? wholeParts(parsed.data) : salvage(tree);
  // A value whose ${VAR} is unset was left as written: the schema's complaint about it would be noise.
  const unexpanded = missing.map((problem) => problem.path);
  const schemaProblems = parsed.success
    ? []
    : issueProblems(configSchema, parsed.error.issues)
        .filter((problem) => !unexpanded.some((path) => within(problem.path, path)))
        .map((problem) => {
          const label = sources === undefined ? undefined : overriddenLabel(sources, problem.path);
          return label === undefined ? problem : { ...problem, path: label };
        });
  const errors = [...missing, ...schemaProblems, ...crossCheck(parts)];
  const config = parsed.success && errors.length === 0 ? deepFreeze(parsed.data) : undefined;
  return { config, errors, parts };
}

/** The file parsed as YAML, or its problems (unreadable; each YAML syntax error with its line). */
function readYaml(file: string): { tree: unknown } | { errors: ConfigProblem[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const message = `cannot read config file ${file}: ${(err as Error).message}`;
    return { errors: [{ code: 'CONFIG_FILE_UNREADABLE', path: '', message }] };
  }
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    return {
      errors: doc.errors.map((err) => ({
        code: 'CONFIG_FILE_UNREADABLE',
        path: err.linePos === undefined ? '' : `line ${err.linePos[0].line}`,
        message: `not valid YAML: ${err.message.split('\n')[0]}`,
      })),
    };
  }
  return { tree: doc.toJS() ?? {} };
}

function within(path: string, ancestor: string): boolean {
  return path === ancestor || path.startsWith(`${ancestor}.`) || ancestor === '';
}

function pick(tree: Record<string, unknown>, keep: (key: string) => boolean): Record<string, unknown> {
  return Object.fromEntries(Object.entries(tree).filter(([key]) => keep(key)));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Freezes a config and everything in it (the pipeline's last step; a reload's kept keys too). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
