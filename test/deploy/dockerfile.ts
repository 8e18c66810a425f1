/**
 * deploy/Dockerfile read and played without a container engine (none runs on the build machines).
 * `parseDockerfile` splits it into stages of instructions; `playStage` carries a stage out in a
 * directory that stands for the image's root file system: WORKDIR, COPY (from the build context or an
 * earlier stage's directory) and ENV act on it, and RUN's commands run there — `npm …` for real, in the
 * working directory; `mkdir -p` and `chown` on absolute paths are mapped into the directory (ownership is
 * only recorded: the test runs as one user). Any other RUN command, and any instruction not listed
 * here, fails the play, so a Dockerfile step this test cannot vouch for is never skipped in silence.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, posix } from 'node:path';

export interface Instruction {
  readonly keyword: string;
  /** `--name=value` options before the arguments (COPY --from, RUN --mount, HEALTHCHECK --interval). */
  readonly flags: Readonly<Record<string, string>>;
  readonly args: string;
  readonly line: number;
}

export interface Stage {
  readonly name: string;
  readonly from: string;
  readonly steps: readonly Instruction[];
}

/** What playing a stage left: its root directory and the image settings its instructions made. */
export interface PlayedStage {
  readonly root: string;
  workdir: string;
  env: Record<string, string>;
  user: string;
  volumes: string[];
  exposed: number[];
  stopSignal: string | undefined;
  healthcheck: string[] | undefined;
  entrypoint: string[];
  cmd: string[];
  /** Paths (in the image) a `chown` named, with their owner. */
  owners: Record<string, string>;
}

export interface PlayOptions {
  /** The build context (the checkout's tracked files). */
  context: string;
  /** Directory standing for this stage's root file system. */
  root: string;
  /** Earlier stages by name, for `COPY --from`. */
  stages: ReadonlyMap<string, PlayedStage>;
  /** Environment added to every RUN command (e.g. npm's cache settings). */
  runEnv: NodeJS.ProcessEnv;
  runTimeoutMs: number;
}

/** Instructions joined across `\` line ends, comments and blank lines dropped. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  let startLine = 0;
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (pending === '') startLine = index + 1;
    if (line.startsWith('#')) continue;
    pending += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line;
    if (line.endsWith('\\')) continue;
    const [keyword = '', ...rest] = pending.split(/\s+/);
    let args = rest.join(' ');
    const flags: Record<string, string> = {};
    for (let flag = /^--([a-z-]+)=(\S+)\s*/.exec(args); flag !== null; flag = /^--([a-z-]+)=(\S+)\s*/.exec(args)) {
      flags[flag[1] as string] = flag[2] as string;
      args = args.slice(flag[0].length);
    }
    out.push({ keyword: keyword.toUpperCase(), flags, args, line: startLine });
    pending = '';
  }
  return out;
}

/** Stages in order; global `ARG NAME=default` values are put into FROM lines. */
export function parseDockerfile(text: string): Stage[] {
  const globals: Record<string, string> = {};
  const stages: Array<{ name: string; from: string; steps: Instruction[] }> = [];
  for (const step of instructions(text)) {
    if (step.keyword === 'ARG' && stages.length === 0) {
      const [name, value = ''] = step.args.split('=');
      globals[name as string] = value;
    } else if (step.keyword === 'FROM') {
      const [image = '', as, name] = step.args.split(/\s+/);
      const from = image.replace(/\$\{(\w+)\}/g, (_, arg: string) => globals[arg] ?? '');
      stages.push({ name: as?.toUpperCase() === 'AS' && name ? name : String(stages.length), from, steps: [] });
    } else {
      const stage = stages.at(-1);
      if (stage === undefined) throw new Error(`line ${step.line}: ${step.keyword} before FROM`);
      stage.steps.push(step);
    }
  }
  return stages;
}

/** A JSON array argument (CMD, ENTRYPOINT, VOLUME, HEALTHCHECK CMD). */
export function jsonArray(args: string, line: number): string[] {
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || parsed.some((item) => typeof item !== 'string')) {
    throw new Error(`line ${line}: expected a JSON array of strings, got ${args}`);
  }
  return parsed as string[];
}

/** A path of the image as a path under `root`. */
export function inRoot(root: string, imagePath: string): string {
  return join(root, imagePath);
}

function copy(step: Instruction, stage: PlayedStage, options: PlayOptions): void {
  const parts = step.args.split(/\s+/);
  const dest = parts.pop() as string;
  const target = inRoot(stage.root, posix.resolve(stage.workdir, dest));
  const fromStage = step.flags.from === undefined ? undefined : options.stages.get(step.flags.from);
  if (step.flags.from !== undefined && fromStage === undefined) {
    throw new Error(`line ${step.line}: COPY --from=${step.flags.from} names no earlier stage`);
  }
  for (const source of parts) {
    const from =
      fromStage === undefined
        ? join(options.context, source)
        : inRoot(fromStage.root, posix.resolve(fromStage.workdir, source));
    if (!existsSync(from)) throw new Error(`line ${step.line}: COPY source ${source} does not exist`);
    const intoDirectory =
      dest.endsWith('/') || parts.length > 1 || (existsSync(target) && statSync(target).isDirectory());
    if (statSync(from).isDirectory()) {
      mkdirSync(target, { recursive: true });
      cpSync(from, target, { recursive: true });
    } else {
      const file = intoDirectory ? join(target, basename(source)) : target;
      mkdirSync(join(file, '..'), { recursive: true });
      cpSync(from, file);
    }
  }
}

function run(step: Instruction, stage: PlayedStage, options: PlayOptions): void {
  for (const command of step.args.split(/\s*&&\s*/)) {
    const [program, ...words] = command.split(/\s+/);
    if (program === 'npm') {
      const cwd = inRoot(stage.root, stage.workdir);
      const result = spawnSync('sh', ['-c', command], {
        cwd,
        env: { ...process.env, ...stage.env, ...options.runEnv },
        encoding: 'utf8',
        timeout: options.runTimeoutMs,
      });
      if (result.status !== 0) {
        throw new Error(
          `line ${step.line}: "${command}" failed (${result.status ?? result.signal}):\n${result.stderr}`,
        );
      }
    } else if (program === 'mkdir' && words[0] === '-p' && words.slice(1).every(isAbsolute)) {
      for (const path of words.slice(1)) mkdirSync(inRoot(stage.root, path), { recursive: true });
    } else if (program === 'chown' && words.length >= 2 && words.slice(1).every(isAbsolute)) {
      for (const path of words.slice(1)) {
        if (!existsSync(inRoot(stage.root, path))) throw new Error(`line ${step.line}: chown of missing ${path}`);
        stage.owners[path] = words[0] as string;
      }
    } else {
      throw new Error(
        `line ${step.line}: RUN command not played here: "${command}" (extend test/deploy/dockerfile.ts)`,
      );
    }
  }
}

/** Carries out one stage's instructions under `options.root`. */
export function playStage(stage: Stage, options: PlayOptions): PlayedStage {
  const played: PlayedStage = {
    root: options.root,
    workdir: '/',
    env: {},
    user: 'root',
    volumes: [],
    exposed: [],
    stopSignal: undefined,
    healthcheck: undefined,
    entrypoint: [],
    cmd: [],
    owners: {},
  };
  mkdirSync(options.root, { recursive: true });
  for (const step of stage.steps) {
    switch (step.keyword) {
      case 'WORKDIR':
        played.workdir = posix.resolve(played.workdir, step.args);
        mkdirSync(inRoot(played.root, played.workdir), { recursive: true });
        break;
      case 'ENV':
        for (const pair of step.args.split(/\s+/)) {
          const [name, ...value] = pair.split('=');
          played.env[name as string] = value.join('=');
        }
        break;
      case 'COPY':
        copy(step, played, options);
        break;
      case 'RUN':
        run(step, played, options);
        break;
      case 'USER':
        played.user = step.args;
        break;
      case 'VOLUME':
        played.volumes.push(...jsonArray(step.args, step.line));
        break;
      case 'EXPOSE':
        played.exposed.push(...step.args.split(/\s+/).map((port) => Number.parseInt(port, 10)));
        break;
      case 'STOPSIGNAL':
        played.stopSignal = step.args;
        break;
      case 'HEALTHCHECK':
        played.healthcheck = jsonArray(step.args.replace(/^CMD\s+/, ''), step.line);
        break;
      case 'ENTRYPOINT':
        played.entrypoint = jsonArray(step.args, step.line);
        break;
      case 'CMD':
        played.cmd = jsonArray(step.args, step.line);
        break;
      default:
        throw new Error(`line ${step.line}: ${step.keyword} is not played here (extend test/deploy/dockerfile.ts)`);
    }
  }
  return played;
}

/** A command of the image (ENTRYPOINT + CMD, HEALTHCHECK) with the image paths it names mapped under the root. */
export function mappedCommand(played: PlayedStage, command: readonly string[]): string[] {
  return command.map((word) =>
    word.startsWith('/') && existsSync(inRoot(played.root, word)) ? inRoot(played.root, word) : word,
  );
}
