/**
 * Mining on the devnet's leader, and what every node's clients see meanwhile. No anvil mines on its own
 * (all start with `--no-mining`); this module decides when the leader mines:
 *
 * - automine (`devnet.block_time` 0, or after `evm_setAutomine true`): a block as soon as the leader holds
 *   a pending transaction — sent to any node (its proxy reports it), or seen by the leader probe. Queued
 *   transactions (nonce gap) do not make a block;
 * - interval (`block_time` > 0, fractions allowed, or `evm_setIntervalMining`): `evm_mine` every interval,
 *   empty blocks included;
 * - on request: `evm_mine`/`anvil_mine` sent to any node run on the leader, and so do the calls that shape
 *   the leader's next blocks or take its chain back (`evm_increaseTime`, `evm_revert`, …; mining-control.ts).
 *
 * Each of these runs as one step, one step at a time, behind a hold on every node's gate (node-proxy.ts):
 * client requests to any node wait from the moment a transaction was answered (or the timer fired, or the
 * mining call arrived) until the step is done — the transaction handed to the leader, the block mined and
 * replayed by every live follower (answering, not catching up, not stuck), the leader's pending
 * transactions copied into every follower's pool — at most `replicationWaitMs` (default 1000 ms) for the
 * replay, then they go on. So any client, on any node, sees the state after its own transaction (nonce,
 * receipt, balance) as soon as it sees anything, never a block one live node lacks, and a leader killed
 * right after a block loses nothing a client saw. A step takes a few milliseconds.
 */
import type { Logger } from '../log.js';
import type { DevnetMember } from './follower.js';
import { type ControlCall, errorBody, resultBody } from './mining-control.js';
import type { NodeGate } from './node-proxy.js';
import type { NodeHead } from './replay.js';

export interface MiningHost {
  leader(): DevnetMember;
  followers(): readonly DevnetMember[];
  /** The gates of every node still running. */
  gates(): readonly NodeGate[];
  leaderHead(): NodeHead;
  /** The leader's pool as last probed. */
  leaderPool(): readonly string[];
  probeLeader(): Promise<void>;
  /** Hands every live follower's new pool transactions to the leader. */
  handOverAll(): Promise<void>;
  /** Copies the leader's pool into every live follower's pool. */
  spreadLeaderPool(): Promise<void>;
  /** Starts a round for each follower not in one. */
  startRounds(): void;
  readonly logger: Logger;
}

interface ReplicationWaiter {
  readonly target: NodeHead;
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
  /** Steps, one after the other. */
  #steps: Promise<unknown> = Promise.resolve();
  /** A transaction step is queued and has not started yet (it will see every transaction until then). */
  #transactionQueued = false;
  readonly #waiters = new Set<ReplicationWaiter>();

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

  /**
   * A node took a transaction (or the leader holds pending ones). Synchronous: every node's clients wait
   * from now until it is with the leader, mined (automine) and replayed, or in every pool.
   */
  transaction(): void {
    if (this.#transactionQueued || this.#stopped) return;
    this.#transactionQueued = true;
    void this.#step(async () => {
      this.#transactionQueued = false;
      await this.#host.handOverAll();
      if (this.#auto) await this.#mine(false, undefined);
      else await this.#host.probeLeader();
      if (this.#host.leaderPool().length > 0) await this.#host.spreadLeaderPool();
    }).catch((err: unknown) => this.#host.logger.debug('devnet: a transaction step failed', { err }));
  }

  /** A new leader: the old leader's blocks no follower has will never come, so nothing waits for them. */
  leaderChanged(): void {
    for (const waiter of this.#waiters) waiter.done();
    this.transaction(); // the followers' pools go to it; its own pool goes into a block
  }

  /** Followers moved: releases the waits whose block every live follower now has. */
  progress(): void {
    for (const waiter of this.#waiters) if (this.#replicatedTo(waiter.target)) waiter.done();
  }

  /** Answers one of anvil's own calls sent to any node (mining-control.ts). */
  async control(call: ControlCall): Promise<string> {
    if (call.kind === 'leader') {
      return (await this.#step(() => this.#mine(true, call.body))) ?? errorBody(call.id, -32000, 'no answer');
    }
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

  /** Runs `work` after the steps before it, holding every node's clients from now until it is done. */
  #step<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#steps.then(work, work);
    this.#steps = run.catch(() => undefined);
    for (const gate of this.#host.gates()) void gate.hold(() => run).catch(() => undefined);
    return run;
  }

  /**
   * On the leader: `body` (a client's call, mining-control.ts) as it is, else `evm_mine` when `force` or
   * the leader has a pending transaction. Resolves (with the leader's answer to `body`) once the new head
   * is replayed by every live follower or the wait is over.
   */
  async #mine(force: boolean, body: Buffer | undefined): Promise<string | undefined> {
    const leader = this.#host.leader();
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
  }

  #replicated(target: NodeHead): Promise<void> {
    if (this.#replicatedTo(target) || this.#stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: ReplicationWaiter = {
        target,
        done: () => {
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.#host.logger.debug('devnet: a block is not on every node yet; clients go on', {
          block: target.number,
          waited_ms: this.#replicationWaitMs,
        });
        waiter.done();
      }, this.#replicationWaitMs);
      timer.unref();
      this.#waiters.add(waiter);
    });
  }

  #replicatedTo(target: NodeHead): boolean {
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
          void this.#step(() => this.#mine(true, undefined))
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
