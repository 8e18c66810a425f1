/**
 * eth_sendRawTransaction (SPEC §17 transactions). The hook claims every send whose param is a hex
 * string (anything else goes to an origin as it is, to be refused there), keyed by its transaction
 * hash (keccak-256 of the raw bytes):
 *   - the resend memory (send-memory.ts): the same raw transaction sent again within 60 s of an
 *     origin accepting it is answered with its hash at once, reaching no origin;
 *   - `networks.{name}.send_transactions: one` (default): one origin at a time, as any write (the
 *     engine's rules: another origin only after a failure to connect); `all`: every origin of the
 *     network that takes traffic (send-all.ts) gets it once, at once, and the first acceptance answers;
 *   - an origin that answers "already known", "known transaction", "nonce too low", …
 *     (model/known-transaction-answers.ts) accepted it when it has that very transaction: the message
 *     names its hash, or the origin answers eth_getTransactionByHash with it (known-transaction.ts).
 *     That is answered as success with the hash — a resend is idempotent — and anything else passes.
 * Each client send reaches each origin at most once. Read-your-writes (write-affinity.ts) sticks the
 * client to the origin that accepted first (for a send answered from memory: the one remembered). An
 * accepted answer carries `acceptedBy` (every origin that accepted it), for the transaction ledger.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import type { UpstreamReply, UpstreamRequest } from '../../rpc/forwarder.js';
import { acceptedAnswer, hashAnswer } from './known-transaction.js';
import type { HookUpstream, MethodHook } from './method-hook.js';
import { sendToAll } from './send-all.js';
import { originName, SendMemory } from './send-memory.js';

const RAW_TRANSACTION = /^0x(?:[0-9a-fA-F]{2})+$/;

export class SendHook implements MethodHook {
  readonly #upstream: HookUpstream;
  readonly #memory: SendMemory;

  constructor(upstream: HookUpstream) {
    this.#upstream = upstream;
    this.#memory = new SendMemory(upstream.clock);
  }

  claims(request: Pick<UpstreamRequest, 'call'>): boolean {
    return rawOf(request) !== undefined;
  }

  async forward(request: UpstreamRequest): Promise<UpstreamReply> {
    const raw = rawOf(request);
    if (raw === undefined) return (await this.#upstream.call(request)).reply;
    const hash = transactionHash(raw);
    const { network } = request;
    const remembered = this.#memory.get(network, hash);
    if (remembered !== undefined) {
      this.#upstream.stick(request, remembered.home);
      const { pool, origin } = remembered.home;
      const reply = hashAnswer(hash, undefined, pool.name, origin.name);
      return { ...reply, acceptedBy: Promise.resolve([...remembered.origins]) };
    }
    if (this.#upstream.settings(network)?.send_transactions === 'all') {
      return sendToAll(this.#upstream, this.#memory, request, hash);
    }
    return this.#sendToOne(request, hash);
  }

  /** `one`: the engine's plan; an "already known" for this very transaction is success. */
  async #sendToOne(request: UpstreamRequest, hash: string): Promise<UpstreamReply> {
    const answer = await this.#upstream.call(request);
    const accepted = await acceptedAnswer(this.#upstream, request, hash, answer);
    if (accepted === undefined) return answer.reply;
    // (An answered hash already made the client stick to the origin; a known one does here.)
    if (accepted !== answer.reply) this.#upstream.stick(request, answer.candidate);
    this.#memory.accepted(request.network, hash, answer.candidate);
    return { ...accepted, acceptedBy: Promise.resolve([originName(answer.candidate)]) };
  }
}

/** The raw transaction a send carries, when it is hex. */
function rawOf(request: Pick<UpstreamRequest, 'call'>): string | undefined {
  const params = request.call.params;
  const raw = Array.isArray(params) ? (params[0] as unknown) : undefined;
  return typeof raw === 'string' && RAW_TRANSACTION.test(raw) ? raw : undefined;
}

/** A signed transaction's hash: keccak-256 of its bytes (typed or legacy), lower-case, 0x-prefixed. */
export function transactionHash(raw: string): string {
  return `0x${Buffer.from(keccak_256(Buffer.from(raw.slice(2), 'hex'))).toString('hex')}`;
}
