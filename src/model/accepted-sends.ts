/**
 * The port through which the gateway tells the transaction ledger (SPEC §19) about each
 * `eth_sendRawTransaction` an origin accepted (answered a `result`), over HTTP or WebSocket, alone or in a
 * batch. `accepted` must return at once and never throw: it runs on the send's answer path. The ledger
 * (ledger/recorder.ts) implements it in the process that owns the store; a gateway worker's
 * implementation batches sends to the control process (cluster/shared-state.ts).
 */
export interface AcceptedSend {
  readonly network: string;
  /** The signed transaction as the client sent it (params[0]); checked and decoded by the ledger. */
  readonly raw: string;
  /** The gateway key the client presented (its id), if any. */
  readonly keyId: string | undefined;
  /** The client's address (behind trusted proxies, the address they name). */
  readonly client: string;
  /** The origins that accepted it, as "pool/origin" names. */
  readonly origins: readonly string[];
  /** Epoch ms. */
  readonly at: number;
}

export interface AcceptedSends {
  accepted(send: AcceptedSend): void;
}
