/**
 * Origins' error answers told apart by their message (model/logs-refusals.ts, model/known-transaction-answers.ts):
 * a table of rows, each a lower-case text the message contains, matched case-insensitively, first row
 * first. Codes are not looked at: they vary from one origin to the next and each means other things too.
 */

export interface MessageRow {
  /** Who answers this way. */
  readonly origin: string;
  /** Lower-case text the message contains. */
  readonly message: string;
}

/** The first row whose text an error's message contains, if the message is a string and one does. */
export function rowForMessage<R extends MessageRow>(rows: readonly R[], message: unknown): R | undefined {
  if (typeof message !== 'string') return undefined;
  const text = message.toLowerCase();
  return rows.find((row) => text.includes(row.message));
}
