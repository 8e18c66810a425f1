import { SwitchyardError } from '../errors/base.js';

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Expands `${NAME}` and `${NAME:-default}` in every string of a parsed YAML tree. `$${` escapes a literal
 * `${`. A reference to an unset variable without a default is an error naming the variable and the key.
 */
export function expandEnv(node: unknown, env: NodeJS.ProcessEnv, file: string, path: string[] = []): unknown {
  if (typeof node === 'string') return expandString(node, env, file, path);
  if (Array.isArray(node)) return node.map((item, i) => expandEnv(item, env, file, [...path, String(i)]));
  if (node !== null && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [key, expandEnv(value, env, file, [...path, key])]),
    );
  }
  return node;
}

function expandString(value: string, env: NodeJS.ProcessEnv, file: string, path: string[]): string {
  const ESCAPE = '\u0000';
  return value
    .replaceAll('$${', ESCAPE)
    .replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      throw new SwitchyardError(
        'CONFIG_ENV_MISSING',
        `${file}: ${path.join('.') || '(root)'} refers to environment variable ${name}, which is not set; ` +
          `set it or write \${${name}:-default}`,
      );
    })
    .replaceAll(ESCAPE, '${');
}
