/**
 * Settings the command line and the environment override (SPEC §15), flags over environment over file
 * (over the built-in defaults):
 *   gateway.listen   --gateway-listen HOST:PORT   SWITCHYARD_GATEWAY_LISTEN
 *   api.listen       --api-listen HOST:PORT       SWITCHYARD_API_LISTEN
 *   data_dir         --data-dir DIR               SWITCHYARD_DATA_DIR
 * and the file itself: --config FILE over SWITCHYARD_CONFIG. An empty variable counts as unset. The
 * value is put into the file's tree before the schema, so it is checked like the file's own; a problem
 * with it is reported under the flag's or the variable's name. Where each setting came from is kept
 * (`SettingSources`), so a listener that cannot bind says which flag or key to change.
 */

export interface CommandLineSettings {
  gatewayListen?: string | undefined;
  apiListen?: string | undefined;
  dataDir?: string | undefined;
}

export type OverridableKey = 'gateway.listen' | 'api.listen' | 'data_dir';

/** Where a setting came from: `label` names it in a message, `change` says how to set another value. */
export interface SettingSource {
  kind: 'flag' | 'environment' | 'file' | 'default';
  label: string;
  change: string;
}

export type SettingSources = Readonly<Record<OverridableKey, SettingSource>>;

interface Override {
  key: OverridableKey;
  path: readonly [string] | readonly [string, string];
  option: keyof CommandLineSettings;
  flag: string;
  variable: string;
  value: string;
}

const OVERRIDES: readonly Override[] = [
  {
    key: 'gateway.listen',
    path: ['gateway', 'listen'],
    option: 'gatewayListen',
    flag: '--gateway-listen',
    variable: 'SWITCHYARD_GATEWAY_LISTEN',
    value: 'HOST:PORT',
  },
  {
    key: 'api.listen',
    path: ['api', 'listen'],
    option: 'apiListen',
    flag: '--api-listen',
    variable: 'SWITCHYARD_API_LISTEN',
    value: 'HOST:PORT',
  },
  {
    key: 'data_dir',
    path: ['data_dir'],
    option: 'dataDir',
    flag: '--data-dir',
    variable: 'SWITCHYARD_DATA_DIR',
    value: 'DIR',
  },
];

/** The config file to read: --config, else SWITCHYARD_CONFIG, else none (the built-in defaults). */
export function configFileFrom(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  return flag ?? nonEmpty(env.SWITCHYARD_CONFIG);
}

/**
 * Puts the overriding values into `tree` (the file's, after ${ENV} expansion; changed in place) for the
 * keys in `keys`, and says where each setting came from. `file` is undefined for the built-in defaults.
 */
export function applyOverrides(
  tree: Record<string, unknown>,
  settings: CommandLineSettings,
  env: NodeJS.ProcessEnv,
  file: string | undefined,
  keys: (topLevel: string) => boolean,
): SettingSources {
  const sources = {} as Record<OverridableKey, SettingSource>;
  for (const override of OVERRIDES) {
    const fromFlag = settings[override.option];
    const fromEnv = nonEmpty(env[override.variable]);
    const value = fromFlag ?? fromEnv;
    if (value !== undefined && keys(override.path[0]) && setAt(tree, override.path, value)) {
      sources[override.key] =
        fromFlag !== undefined
          ? { kind: 'flag', label: override.flag, change: `pass another value to ${override.flag}` }
          : { kind: 'environment', label: override.variable, change: `set ${override.variable} to another value` };
      continue;
    }
    const written = file !== undefined && valueAt(tree, override.path) !== undefined;
    sources[override.key] = written
      ? {
          kind: 'file',
          label: `${override.key} in ${file}`,
          change: `change ${override.key} in ${file} (or override it with ${override.flag} ${override.value})`,
        }
      : {
          kind: 'default',
          label: `the default ${override.key}`,
          change: `choose another with ${override.flag} ${override.value}, ${override.variable} or ${override.key} in a config file`,
        };
  }
  return sources;
}

/** The flag or variable a problem at `path` (dotted) is to be reported under, when it set that value. */
export function overriddenLabel(sources: SettingSources, path: string): string | undefined {
  const source = sources[path as OverridableKey];
  return source?.kind === 'flag' || source?.kind === 'environment' ? source.label : undefined;
}

function setAt(tree: Record<string, unknown>, path: Override['path'], value: string): boolean {
  if (path.length === 1) {
    tree[path[0]] = value;
    return true;
  }
  const [section, key] = path;
  const current = tree[section];
  if (current === undefined || current === null) {
    tree[section] = { [key]: value };
    return true;
  }
  // A section that is not a map is the schema's to refuse; the override then has nothing to go into.
  if (typeof current !== 'object' || Array.isArray(current)) return false;
  tree[section] = { ...current, [key]: value };
  return true;
}

function valueAt(tree: Record<string, unknown>, path: Override['path']): unknown {
  let node: unknown = tree;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
