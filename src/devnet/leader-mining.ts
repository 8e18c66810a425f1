/**
 * Mining on the devnet's leader. No anvil mines on its own (all start with `--no-mining`); this module
 * decides when the leader mines, and makes the new block visible only once the other nodes have it:
 *
 * - automine (`devnet.block_time` 0, or after `evm_setAutomine true`): a block as soon as the leader holds
 *   a pending transaction — sent to it (its proxy reports it), handed over by a follower, or seen by the
 *   leader probe. Queued transactions (nonce gap) do not make a block;
 * - interval (`block_time` > 0, fractions allowed, or `evm_setIntervalMining`): `evm_mine` every interval,
 *   empty blocks included;
 * - on request: `evm_mine`/`anvil_mine` sent to any node run on the leader, and so do the calls that shape
 *   the leader's next blocks or take its chain back (`evm_increaseTime`, `evm_revert`, …; mining-control.ts).
 *
 * Every mining runs behind the leader's gate (node-proxy.ts `hold`): requests to the leader wait from the
 * moment its transaction was answered (or the timer fired) until the block is mined and every live
 * follower (answering, not catching up, not stuck) has replayed it — at most `replicationWaitMs` (default
 * 1000 ms), then they go on. So a client never sees a leader block another live node lacks, and a leader
 * killed right after a block loses nothing a client saw. Mining runs one at a time (the gate queues holds).
 */
import type { Logger } from '../log.js';
import type { Member } from './follower.js';
import { type ControlCall, errorBody, resultBody } from './mining-control.js';
import type { Head } from './replay.js';

export interface MiningHost {
  leader(): Member;
  followers(): readonly Member[];
  leaderHead(): Head;
  probeLeader(): Promise<void>;
  /** Starts a round for each follower not in one. */
  startRounds(): void;
  readonly logger: Logger;
}

interface Waiter {
  readonly target: Head;
  readonly done: () => void;
}

export class LeaderMining {
  readonly #host: MiningHost;
  readonly #replicationWaitMs: number;
  #auto: boolean;
  #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  /** Bumped by every mode change, so a timer of an older mode stops. */
  #generation = 0;
  #stopped = false;
  /** An automine round is queued and has not started yet (it will see every transaction until then). */
  #autoQueued = false;
  readonly #waiters = new Set<Waiter>();

  constructor(host: MiningHost, options: { blockTimeMs: number; replicationWaitMs?: number }) {
    this.#host = host;
    this.#auto = options.blockTimeMs === 0;
    this.#intervalMs = options.blockTimeMs;
    this.#replicationWaitMs = options.replicationWaitMs ?? 1000;
  }

  start(): void {
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    for (const waiter of this.#waiters) waiter.done();
  }

  /** The leader holds (or is about to hold) a pending transaction. Synchronous: holds the leader's gate. */
  transaction(): void {
    if (!this.#auto || this.#autoQueued || this.#stopped) return;
    this.#autoQueued = true;
    void this.#mine(false, undefined).catch((err: unknown) =>
      this.#host.logger.debug('devnet: automine failed', { err }),
    );
  }

  /** A new leader: the old leader's blocks no follower has will never come, so nothing waits for them. */
  leaderChanged(): void {
    for (const waiter of this.#waiters) waiter.done();
    this.transaction(); // its own pool (transactions clients sent to it) goes into a block
  }

  /** Followers moved: releases the holds whose block every live follower now has. */
  progress(): void {
    for (const waiter of this.#waiters) if (this.#replicatedTo(waiter.target)) waiter.done();
  }

  /** Answers one of anvil's own calls sent to any node (mining-control.ts). */
  async control(call: ControlCall): Promise<string> {
    if (call.kind === 'leader') return (await this.#mine(true, call.body)) ?? errorBody(call.id, -32000, 'no answer');
    if (call.kind === 'refused') {
      return errorBody(
        call.id,
        -32000,
        `${call.method} would change one devnet node outside any block, so the nodes would stop being one chain; ` +
          'it is refused on a devnet with more than one node (set devnet.nodes: 1 for scripts that need it)',
      );
    }
    const [arg] = call.params;
    switch (call.method) {
      case 'evm_setAutomine':
      case 'anvil_setAutomine':
        if (typeof arg !== 'boolean') return errorBody(call.id, -32602, 'expected a boolean');
        this.#auto = arg;
        if (arg) this.#intervalMs = 0;
        this.#schedule();
        if (arg) this.transaction();
        return resultBody(call.id, null);
      case 'evm_setIntervalMining':
      case 'anvil_setIntervalMining': {
        const seconds = Number(arg);
        if (!Number.isFinite(seconds) || seconds < 0) return errorBody(call.id, -32602, 'expected seconds ≥ 0');
        this.#intervalMs = seconds * 1000;
        if (seconds > 0) this.#auto = false;
        this.#schedule();
        return resultBody(call.id, null);
      }
      case 'anvil_getAutomine':
        return resultBody(call.id, this.#auto);
      default:
        return resultBody(call.id, this.#intervalMs > 0 ? this.#intervalMs / 1000 : null);
    }
  }

  /**
   * Mines on the leader behind its gate: `body` (a client's call, mining-control.ts) as it is, else `evm_mine` when
   * `force` or the leader has a pending transaction. Resolves (with the leader's answer to `body`) once
   * the new head is replicated or the wait is over.
   */
  #mine(force: boolean, body: Buffer | undefined): Promise<string | undefined> {
    const leader = this.#host.leader();
    return leader.gate.hold(async () => {
      if (!force) this.#autoQueued = false;
      if (leader !== this.#host.leader()) return this.#mine(force, body); // failover meanwhile
      let answer: string | undefined;
      if (body !== undefined) answer = await leader.rpc.raw(body);
      else if (!force) {
        const status = await leader.rpc.call<{ pending: string }>('txpool_status');
        if (Number(status.pending) === 0) return undefined;
      }
      if (body === undefined) await leader.rpc.call('evm_mine', []);
      const mined = performance.now();
      await this.#host.probeLeader();
      this.#host.startRounds();
      const head = this.#host.leaderHead();
      await this.#replicated(head);
      this.#host.logger.debug('devnet block replicated', { block: head.number, ms: performance.now() - mined });
      if (!force) this.transaction(); // the block may have made a queued transaction pending
      return answer;
    });
  }

  #replicated(target: Head): Promise<void> {
    if (this.#replicatedTo(target) || this.#stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        target,
        done: () => {
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.#host.logger.debug('devnet: a block is not on every node yet; the leader answers anyway', {
          block: target.number,
          waited_ms: this.#replicationWaitMs,
        });
        waiter.done();
      }, this.#replicationWaitMs);
      timer.unref();
      this.#waiters.add(waiter);
    });
  }

  #replicatedTo(target: Head): boolean {
    return this.#host.followers().every((m) => {
      if (m.exited || m.unreachable || m.refusingSince !== undefined || m.stuck !== undefined) return true;
      const head = m.head;
      return head !== undefined && (head.number > target.number || head.hash === target.hash);
    });
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    this.#generation += 1;
    if (this.#stopped || this.#intervalMs <= 0) return;
    const every = this.#intervalMs;
    const generation = this.#generation;
    const tick = (due: number): void => {
      this.#timer = setTimeout(
        () => {
          void this.#mine(true, undefined)
            .catch((err: unknown) => this.#host.logger.debug('devnet: the leader did not mine', { err }))
            .finally(() => {
              if (generation === this.#generation && !this.#stopped) tick(Math.max(due + every, Date.now()));
            });
        },
        Math.max(0, due - Date.now()),
      );
      this.#timer.unref();
    };
    tick(Date.now() + every);
  }
}
