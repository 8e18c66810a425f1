import type { ConfigProblem } from './problems.js';

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Expands `${NAME}` and `${NAME:-default}` in every string of a parsed YAML tree. `$${` escapes a literal
 * `${`. A reference to an unset (or empty) variable without a default is a problem naming the variable
 * and the key; every such reference is reported, and its string is left as written.
 */
export function expandEnv(node: unknown, env: NodeJS.ProcessEnv): { value: unknown; missing: ConfigProblem[] } {
  const missing: ConfigProblem[] = [];
  const value = expandNode(node, env, [], missing);
  return { value, missing };
}

function expandNode(node: unknown, env: NodeJS.ProcessEnv, path: string[], missing: ConfigProblem[]): unknown {
  if (typeof node === 'string') return expandString(node, env, path, missing);
  if (Array.isArray(node)) return node.map((item, i) => expandNode(item, env, [...path, String(i)], missing));
  if (node !== null && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [key, expandNode(value, env, [...path, key], missing)]),
    );
  }
  return node;
}

function expandString(value: string, env: NodeJS.ProcessEnv, path: string[], missing: ConfigProblem[]): string {
  const ESCAPE = '\u0000';
  let unset = false;
  const expanded = value
    .replaceAll('$${', ESCAPE)
    .replace(REFERENCE, (match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      unset = true;
      missing.push({
        code: 'CONFIG_ENV_MISSING',
        path: path.join('.'),
        message: `refers to environment variable ${name}, which is not set; set it or write \${${name}:-default}`,
      });
      return match;
    })
    .replaceAll(ESCAPE, '${');
  return unset ? value : expanded;
}
