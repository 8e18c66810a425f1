/**
 * Asking the person at the terminal, for commands that confirm before they change something
 * (`migrate-notifications`, `config apply --prune`): only when stdin and stdout are both a terminal;
 * otherwise nobody can answer and such commands refuse unless told `--yes`.
 */
import { createInterface } from 'node:readline/promises';

export function isInteractive(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY);
}

/** Asks on stdout and resolves with the line typed on stdin. */
export async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}
