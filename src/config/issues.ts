/**
 * The schema's complaints (zod issues) as config problems: one per issue, its path dotted, its message
 * what a person fixes. An unknown key names the key and, when a known key of that object is within edit
 * distance 2, suggests it (suggest.ts); a refused map key (a network name such as `Mainnet`) suggests its
 * lowercase form when that is allowed; a missing required key says "is required".
 */
import type { z } from 'zod';
import type { ConfigProblem } from './problems.js';
import { didYouMean, meant } from './suggest.js';

/** The parts of a zod schema's definition the walk below reads. */
interface SchemaDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  options?: z.ZodType[];
}

function defOf(schema: z.ZodType): SchemaDef {
  return (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
}

/** The schema itself, through the wrappers that do not change its shape (optional, default, a pipe's input). */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
    if (inner === undefined) return current;
    current = inner;
  }
}

/** The schema that validates the value at `path` inside `schema`, or undefined when the path leaves it. */
export function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = unwrap(schema);
  for (const segment of path) {
    if (current === undefined) return undefined;
    const def = defOf(current);
    if (def.type === 'object') current = def.shape?.[String(segment)];
    else if (def.type === 'array') current = def.element;
    else if (def.type === 'record') current = def.valueType;
    else if (def.type === 'union') current = def.options?.map(unwrap).find((option) => defOf(option).type === 'object');
    else return undefined;
    current = current === undefined ? undefined : unwrap(current);
  }
  return current;
}

/** The keys the object at `path` knows (none when the path is not an object). */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const at = schemaAt(schema, path);
  const def = at === undefined ? undefined : defOf(at);
  return def?.type === 'object' ? Object.keys(def.shape ?? {}) : [];
}

/** Every issue of a failed parse as problems (safeParse with `reportInput: true`, so absent values are told). */
export function issueProblems(schema: z.ZodType, issues: readonly z.core.$ZodIssue[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const issue of issues) {
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(schema, issue.path);
      for (const key of issue.keys) {
        const hint = didYouMean(key, known) || '; see docs/configuration.md for the keys';
        problems.push({ code: 'CONFIG_UNKNOWN_KEY', path: [...path, key].join('.'), message: `unknown key${hint}` });
      }
      continue;
    }
    problems.push({ code: 'CONFIG_INVALID', path: path.join('.'), message: issueMessage(schema, issue) });
  }
  return problems;
}

function issueMessage(schema: z.ZodType, issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'is required';
  if (issue.code === 'invalid_key') {
    const key = String(issue.path.at(-1) ?? '');
    const rule = issue.issues[0]?.message ?? issue.message;
    const record = schemaAt(schema, issue.path.slice(0, -1));
    const keyType = record === undefined ? undefined : defOf(record).keyType;
    const lower = key.toLowerCase();
    const fits = keyType !== undefined && lower !== key && keyType.safeParse(lower).success;
    return `${JSON.stringify(key)} is not allowed as a name: ${rule}${fits ? meant(lower) : ''}`;
  }
  if (issue.code === 'invalid_union') {
    const branches = issue.errors.map((branch) => branch[0]?.message.replace(/^Invalid input: /, '')).filter(Boolean);
    return branches.length > 0 ? `invalid value: ${branches.join('; or ')}` : issue.message;
  }
  return issue.message;
}
