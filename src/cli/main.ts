/** CLI dispatcher: `switchyard <command> [options]`. Each command lives in its own file. */
export async function main(argv: string[]): Promise<number> {
  const [command] = argv;
  process.stderr.write(`switchyard: unknown command ${command ?? '(none)'}\n`);
  return 2;
}
