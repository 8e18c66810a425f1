/** Runs `switchyard migrate-notifications` in-process with captured output (no terminal unless asked). */
import { type CommandIo, migrateNotifications } from '../../src/cli/migrate-notifications/command.js';

export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Back-off delays the client asked for, in ms (returned at once: tests do not wait). */
  sleeps: number[];
}

export async function runCommand(
  argv: string[],
  options: { env?: NodeJS.ProcessEnv; answer?: string; fetch?: typeof fetch } = {},
): Promise<CommandRun> {
  let stdout = '';
  let stderr = '';
  const sleeps: number[] = [];
  const io: CommandIo = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: options.env ?? {},
    interactive: options.answer !== undefined,
    ask: async (question) => {
      stdout += question;
      return options.answer ?? '';
    },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  };
  const code = await migrateNotifications(argv, io);
  return { code, stdout, stderr, sleeps };
}
