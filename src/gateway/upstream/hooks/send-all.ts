/**
 * `send_transactions: all` (SPEC §17): a send goes, at once, to every origin of the network that takes
 * traffic now — every healthy origin of every healthy pool, as router.ts `plan` lists them (benched
 * origins left out; none at all is NO_HEALTHY_ORIGIN or UPSTREAM_THROTTLED as for any call) — one
 * attempt each through the engine (`callOn`: its rules, health, score and throttling), so each origin
 * gets the transaction at most once. The first acceptance (known-transaction.ts) is the client's answer,
 * and the origin the client sticks to for its pending-state reads; the others finish on their own,
 * whether the client waits or not (they are not tied to its signal), and join the resend memory and
 * `acceptedBy` as they accept.
 *
 * When no origin accepts: the first JSON-RPC answer in plan order passes through (an origin's refusal,
 * e.g. "insufficient funds"), else the first origin's error (502/504, as for a write to one origin).
 */
import type { UpstreamReply, UpstreamRequest } from '../../rpc/forwarder.js';
import { acceptedAnswer } from './known-transaction.js';
import type { CalledAnswer, HookUpstream } from './method-hook.js';
import { originName, type SendMemory } from './send-memory.js';

type Leg = { readonly answer: CalledAnswer } | { readonly error: unknown };

export function sendToAll(
  upstream: HookUpstream,
  memory: SendMemory,
  request: UpstreamRequest,
  hash: string,
): Promise<UpstreamReply> {
  const candidates = upstream.origins(request);
  const detached: UpstreamRequest = { ...request, signal: undefined };
  const acceptedBy: string[] = [];
  let settleAll!: (origins: readonly string[]) => void;
  const everyone = new Promise<readonly string[]>((resolve) => {
    settleAll = resolve;
  });
  return new Promise((resolve, reject) => {
    let answered = false;
    const legs = candidates.map(
      (candidate): Promise<Leg> =>
        upstream.callOn(detached, candidate).then(
          async (answer) => {
            const accepted = await acceptedAnswer(upstream, detached, hash, answer).catch(() => undefined);
            if (accepted !== undefined) {
              acceptedBy.push(originName(candidate));
              memory.accepted(request.network, hash, candidate);
              if (!answered) {
                answered = true;
                upstream.stick(request, candidate);
                resolve({ ...accepted, acceptedBy: everyone });
              }
            }
            return { answer };
          },
          (error: unknown) => ({ error }),
        ),
    );
    void Promise.all(legs).then((settled) => {
      settleAll([...acceptedBy]);
      if (answered) return;
      const refused = settled.find((leg): leg is { answer: CalledAnswer } => 'answer' in leg);
      if (refused !== undefined) resolve(refused.answer.reply);
      else reject((settled[0] as { error: unknown } | undefined)?.error ?? new Error('no origin to send to'));
    });
  });
}
