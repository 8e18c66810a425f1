/**
 * Makes the devnet's anvil nodes one chain: every node reports the same block hash at every height.
 *
 * Roles. One node, the leader (anvil-0 at start), mines: a block per transaction (anvil automine,
 * `evm_setAutomine true`) when `devnet.block_time` is 0; otherwise the replicator calls `evm_mine` on it
 * every `block_time` seconds (fractions work, and no node ever mines on a timer of its own). Every node
 * starts with `--no-mining --order fifo`; the others, followers, never mine on their own: they replay the
 * leader's blocks (follower.ts, replay.ts).
 *
 * The loop runs a round every `pollMs` (default 25 ms), and at once when a node's proxy has just passed
 * on a transaction (`wake`): probe the leader (latest block and pool, one batch; every call to a node
 * times out after 500 ms), then start a round for each follower not still busy with its previous one (so
 * a stopped follower delays no one).
 *
 * Failover. When the leader's process exits, or it has not answered for `failoverMs` (default 1000 ms,
 * e.g. SIGSTOP), the live follower with the highest block (ties: the next after the old leader) is
 * promoted: its round is awaited, its automine turned on, and every follower hands its pool to it again.
 * Blocks the old leader mined that no follower had replayed are lost, unless it comes back before the new
 * leader mines (then they are adopted). A follower that has not answered for `failoverMs`, and a demoted
 * leader, refuse clients (503 from their proxy) until they are in step again: a node that comes back
 * (SIGCONT) has its mining turned off and catches up by replay in its next round, before the gateway's
 * monitor can see it healthy. A killed node stays down; nothing restarts it.
 */
import type { Logger } from '../log.js';
import { type Chain, followerRound, Handed, type Member, newMember, refuseClients } from './follower.js';
import type { NodeGate } from './node-proxy.js';
import { NodeRpc, NodeUnreachable } from './node-rpc.js';
import { type Head, hashesOf, RawTransactions, type TxPoolContent } from './replay.js';

export interface ReplicaNode {
  /** The anvil's own URL (the replicator's calls bypass the gate). */
  readonly url: string;
  readonly name: string;
  /** The node's proxy, through which every client reaches it. */
  readonly gate: NodeGate;
  /** Resolves when the node's process has exited. */
  readonly exited: Promise<void>;
}

export interface ReplicatorOptions {
  /** 0: the leader mines a block per transaction; otherwise one block every `blockTimeMs`. */
  readonly blockTimeMs: number;
  readonly logger: Logger;
  readonly pollMs?: number;
  readonly failoverMs?: number;
}

export interface ReplicaStatus {
  readonly name: string;
  readonly role: 'leader' | 'follower' | 'exited';
  /** Answered the replicator within the failover time. */
  readonly answering: boolean;
  /** Its latest block as last seen. */
  readonly height: number | undefined;
  /** Its latest block is the leader's latest block (as last seen). */
  readonly inStep: boolean;
}

interface RpcHead {
  number: string;
  hash: string;
}

export class ChainReplicator {
  readonly #members: Member[];
  readonly #logger: Logger;
  readonly #blockTimeMs: number;
  readonly #pollMs: number;
  readonly #failoverMs: number;
  readonly #raws = new RawTransactions();
  /** Transactions the current leader holds or was handed. */
  readonly #handed = new Handed();
  #leader = 0;
  /** Bumped on every leader change; a round started under an older epoch stops. */
  #epoch = 0;
  #leaderHead: Head = { number: 0, hash: '' };
  #leaderPool: string[] = [];
  /** Serialises what mines on the leader besides its automine: the block timer and adoptions. */
  #leaderWork: Promise<unknown> = Promise.resolve();
  #stopped = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #woken = false;
  #blockTimer: NodeJS.Timeout | undefined;
  #noLeaderLogged = false;
  readonly #chain: Chain;

  constructor(nodes: readonly ReplicaNode[], options: ReplicatorOptions) {
    this.#logger = options.logger;
    this.#blockTimeMs = options.blockTimeMs;
    this.#pollMs = options.pollMs ?? 25;
    this.#failoverMs = options.failoverMs ?? 1000;
    this.#members = nodes.map((node, index) => newMember(index, new NodeRpc(node.url, node.name), node.gate));
    this.#chain = this.#chainView();
    for (const [index, node] of nodes.entries()) {
      void node.exited.then(() => {
        (this.#members[index] as Member).exited = true;
        this.wake();
      });
    }
  }

  /** Checks that the nodes share a genesis block, turns the leader's mining on and starts the loop. */
  async start(): Promise<void> {
    const geneses = await Promise.all(
      this.#members.map((m) => m.rpc.call<RpcHead>('eth_getBlockByNumber', ['0x0', false])),
    );
    if (new Set(geneses.map((block) => block.hash)).size !== 1)
      throw new Error('the nodes do not share a genesis block');
    const leader = this.#member(this.#leader);
    if (this.#blockTimeMs === 0) await leader.rpc.call('evm_setAutomine', [true]);
    leader.quiet = false;
    await this.#probeLeader();
    this.#loop = this.#run();
    if (this.#blockTimeMs > 0) this.#scheduleBlock(Date.now() + this.#blockTimeMs);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#blockTimer);
    this.#wake?.();
    await this.#loop;
    await Promise.all(this.#members.map((m) => m.busy));
  }

  /** Starts a round now, or right after the current one (a client just sent a transaction). */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  status(): ReplicaStatus[] {
    const now = Date.now();
    return this.#members.map((m) => ({
      name: m.rpc.name,
      role: m.exited ? 'exited' : m.index === this.#leader ? 'leader' : 'follower',
      answering: !m.exited && now - m.lastAnswer < this.#failoverMs,
      height: m.head?.number,
      inStep: m.index === this.#leader ? !m.exited : m.inStep,
    }));
  }

  #member(index: number): Member {
    return this.#members[index] as Member;
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      this.#woken = false;
      await this.#round().catch((err: unknown) => this.#logger.debug('devnet replication round failed', { err }));
      if (this.#stopped) return;
      if (this.#woken) continue; // woken during the round: go again at once
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.#wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, this.#pollMs);
        timer.unref();
        this.#wake = done;
      });
    }
  }

  async #round(): Promise<void> {
    const leader = this.#member(this.#leader);
    if (leader.exited || Date.now() - leader.lastAnswer >= this.#failoverMs) await this.#failover(leader);
    await this.#probeLeader();
    const now = Date.now();
    for (const m of this.#members) {
      if (m.index === this.#leader || m.exited || this.#stopped) continue;
      if (now - m.lastAnswer >= this.#failoverMs) refuseClients(m, 'not answering');
      if (m.busy !== undefined) continue;
      m.busy = followerRound(m, this.#chain)
        .catch((err: unknown) => this.#syncFailed(m, err))
        .finally(() => {
          m.busy = undefined;
        });
    }
  }

  async #probeLeader(): Promise<void> {
    const leader = this.#member(this.#leader);
    const epoch = this.#epoch;
    let answers: Awaited<ReturnType<NodeRpc['batch']>>;
    try {
      answers = await leader.rpc.batch([
        ['eth_getBlockByNumber', ['latest', false]],
        ['txpool_content', []],
      ]);
    } catch (err) {
      if (err instanceof NodeUnreachable) return;
      throw err;
    }
    if (epoch !== this.#epoch) return;
    leader.lastAnswer = Date.now();
    const [latest, pool] = answers;
    if (latest?.ok) {
      const block = latest.result as RpcHead;
      leader.head = { number: Number(block.number), hash: block.hash };
      this.#leaderHead = leader.head;
    }
    if (pool?.ok) {
      this.#leaderPool = hashesOf(pool.result as TxPoolContent);
      for (const hash of this.#leaderPool) this.#handed.add(hash);
    }
  }

  async #failover(old: Member): Promise<void> {
    const distance = (m: Member): number => (m.index - old.index + this.#members.length) % this.#members.length;
    const candidates = this.#members
      .filter((m) => m !== old && !m.exited)
      .sort((a, b) => (b.head?.number ?? -1) - (a.head?.number ?? -1) || distance(a) - distance(b));
    for (const candidate of candidates) {
      await candidate.busy;
      try {
        const block = await candidate.rpc.call<RpcHead>('eth_getBlockByNumber', ['latest', false]);
        if (this.#blockTimeMs === 0) await candidate.rpc.call('evm_setAutomine', [true]);
        this.#leader = candidate.index;
        this.#epoch += 1;
        this.#handed.clear();
        this.#leaderPool = [];
        this.#leaderHead = { number: Number(block.number), hash: block.hash };
        candidate.head = this.#leaderHead;
        candidate.lastAnswer = Date.now();
        candidate.quiet = false;
        candidate.stuck = undefined;
        old.quiet = false; // it may still mine when it answers again
        old.inStep = false;
        refuseClients(old, 'no longer the leader');
        this.#noLeaderLogged = false;
        this.#logger.warn('devnet leader changed', {
          from: old.rpc.name,
          to: candidate.rpc.name,
          reason: old.exited ? 'exited' : `no answer for ${this.#failoverMs} ms`,
          height: this.#leaderHead.number,
        });
        return;
      } catch (err) {
        this.#logger.debug('devnet: cannot promote node', { node: candidate.rpc.name, err });
      }
    }
    if (!this.#noLeaderLogged) this.#logger.error('devnet: no node can take over as leader', { old: old.rpc.name });
    this.#noLeaderLogged = true;
  }

  /** The replicator's state as a follower's round sees it (follower.ts). */
  #chainView(): Chain {
    const self = this;
    return {
      get leader() {
        return self.#member(self.#leader);
      },
      get epoch() {
        return self.#epoch;
      },
      get head() {
        return self.#leaderHead;
      },
      set head(head: Head) {
        self.#leaderHead = head;
      },
      get leaderPool() {
        return self.#leaderPool;
      },
      automine: this.#blockTimeMs === 0,
      get stopped() {
        return self.#stopped;
      },
      raws: this.#raws,
      logger: this.#logger,
      handed: this.#handed,
      probeLeader: () => this.#probeLeader(),
      onLeader: (work) => this.#onLeader(work),
    };
  }

  /** Serialises work that mines on the leader besides its automine (the block timer, adoptions). */
  #onLeader<T>(work: () => Promise<T>): Promise<T> {
    const done = this.#leaderWork.then(work, work);
    this.#leaderWork = done.catch(() => undefined);
    return done;
  }

  #syncFailed(m: Member, err: unknown): void {
    const message = (err as Error)?.message ?? String(err);
    if (message === m.lastError) return;
    m.lastError = message;
    const level = err instanceof NodeUnreachable ? 'debug' : 'warn';
    this.#logger[level]('devnet: replication round failed', { node: m.rpc.name, err });
  }

  #scheduleBlock(due: number): void {
    if (this.#stopped) return;
    this.#blockTimer = setTimeout(
      () => {
        void this.#mineOnLeader().finally(() => this.#scheduleBlock(Math.max(due + this.#blockTimeMs, Date.now())));
      },
      Math.max(0, due - Date.now()),
    );
    this.#blockTimer.unref();
  }

  async #mineOnLeader(): Promise<void> {
    await this.#onLeader(async () => {
      try {
        await this.#member(this.#leader).rpc.call('evm_mine', []);
        this.wake();
      } catch (err) {
        this.#logger.debug('devnet: the leader did not mine', { err });
      }
    });
  }
}
