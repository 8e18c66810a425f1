/**
 * Origins' answers to an `eth_sendRawTransaction` that mean "I may already have this one" (SPEC §17
 * transactions), as one table: the transaction is in the origin's pool already ("already known", "known
 * transaction", "already imported"), or its sender's nonce has moved past it ("nonce too low") — which is
 * what a resend of a mined transaction meets. Neither says the transaction is the client's: the send hook
 * (gateway/upstream/hooks/eth-send-raw-transaction.ts) answers success with the hash only when the
 * origin has that very hash (asked with eth_getTransactionByHash on that origin, or named in the message).
 *
 * Matched on the message only (a case-insensitive substring); the codes vary (-32000, -32003, -32010).
 * Where each row comes from: docs/routing.md "Sends".
 */

import { type MessageRow, rowForMessage } from './message-rows.js';

export type KnownTransactionAnswer = MessageRow;

export const KNOWN_TRANSACTION_ANSWERS: readonly KnownTransactionAnswer[] = [
  // geth core/txpool/errors.go ErrAlreadyKnown; reth RpcPoolError::AlreadyKnown; erigon's txpool; Nethermind
  // TxPoolErrorMessages.AlreadyKnown (its older "AlreadyKnown: transaction is already known." matches too)
  { origin: 'geth', message: 'already known' },
  { origin: 'Nethermind', message: 'alreadyknown' },
  // geth before 1.9: "known transaction: <hash>"; besu RpcErrorType.ETH_SEND_TX_ALREADY_KNOWN "Known transaction"
  { origin: 'besu', message: 'known transaction' },
  // anvil crates/anvil/src/eth/error: "transaction already imported"; OpenEthereum "… was already imported."
  { origin: 'anvil', message: 'already imported' },
  // geth core/error.go ErrNonceTooLow; reth, anvil and besu say the same ("nonce too low: next nonce …")
  { origin: 'geth', message: 'nonce too low' },
  // Nethermind before 1.26: "OldNonce"
  { origin: 'Nethermind', message: 'oldnonce' },
];

const HASH_IN_TEXT = /(?:0x)?([0-9a-f]{64})(?![0-9a-f])/;

/**
 * When an origin's error to a send is one of the table's: the row, and the transaction hash the message
 * names (lower-case, 0x-prefixed), if it names one.
 */
export function knownTransactionAnswer(error: {
  message?: unknown;
}): { readonly row: KnownTransactionAnswer; readonly hash: string | undefined } | undefined {
  const row = rowForMessage(KNOWN_TRANSACTION_ANSWERS, error.message);
  if (row === undefined) return undefined;
  const named = HASH_IN_TEXT.exec((error.message as string).toLowerCase())?.[1];
  return { row, hash: named === undefined ? undefined : `0x${named}` };
}
