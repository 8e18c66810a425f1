/**
 * Makes the devnet's anvil nodes one chain: every node reports the same block hash at every height.
 *
 * Roles. One node, the leader (anvil-0 at start), gets the blocks: leader-mining.ts mines on it (a block
 * per transaction when `devnet.block_time` is 0, else one every `block_time` seconds). The others,
 * followers, replay the leader's blocks (follower.ts, replay.ts). No anvil mines on its own: all start
 * with `--no-mining --order fifo`.
 *
 * Replication is driven by events: a block mined starts a round for every follower at once, a transaction
 * passed on by a follower's proxy wakes the loop, an exited process too. The loop also runs a round every
 * `pollMs` (default 200 ms) for what no event reports (a dead or stopped leader, a transaction sent to
 * anvil's own port): probe the leader (latest block and pool, one batch; every call to a node times out
 * after 500 ms; pending transactions there are mined in automine mode), then start a round for each
 * follower not still busy with its previous one (a stopped follower delays no one).
 *
 * Failover. When the leader's process exits, or it has not answered for `failoverMs` (default 1000 ms,
 * e.g. SIGSTOP), the live follower with the highest block (ties: the next after the old leader) is
 * promoted: its round is awaited, then blocks are mined on it, and every follower hands its pool to it
 * again. Clients of every node wait while a block is mined and replayed (leader-mining.ts), so the
 * promoted node has every block a client saw, unless it was lagging past the 1 s wait. A follower that
 * has not answered for `failoverMs`, and a demoted leader, refuse clients (503 from their proxy) until a
 * round finds them in step: a node that comes back (SIGCONT) rolls back whatever the chain does not have
 * and catches up by replay before the gateway's monitor can see it healthy. A killed node stays down;
 * nothing restarts it.
 */
import type { Logger } from '../log.js';
import {
  type DevnetMember,
  type FollowerContext,
  followerRound,
  Handed,
  handOver,
  LeaderBlocks,
  newMember,
  refuseClients,
  takeLeaderPool,
} from './follower.js';
import { LeaderMining } from './leader-mining.js';
import { type ControlCall, controlCall } from './mining-control.js';
import type { NodeGate } from './node-proxy.js';
import { type NodeAnswer, NodeRpc, NodeUnreachable } from './node-rpc.js';
import { hashesOf, type NodeHead, RawTransactions, type TxPoolContent } from './replay.js';

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
  /** 0: a block per transaction; otherwise one block every `blockTimeMs`. */
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
  readonly #members: DevnetMember[];
  readonly #logger: Logger;
  readonly #pollMs: number;
  readonly #failoverMs: number;
  readonly #raws = new RawTransactions();
  /** Transactions the current leader holds or was handed. */
  readonly #handed = new Handed();
  readonly #leaderBlocks = new LeaderBlocks();
  readonly #chain: FollowerContext;
  readonly #mining: LeaderMining;
  #leader = 0;
  /** Bumped on every leader change; a round started under an older epoch stops. */
  #epoch = 0;
  #leaderHead: NodeHead = { number: 0, hash: '' };
  #leaderPool: string[] = [];
  #stopped = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #woken = false;
  #noLeaderLogged = false;

  constructor(nodes: readonly ReplicaNode[], options: ReplicatorOptions) {
    this.#logger = options.logger;
    this.#pollMs = options.pollMs ?? 200;
    this.#failoverMs = options.failoverMs ?? 1000;
    this.#members = nodes.map((node, index) => newMember(index, new NodeRpc(node.url, node.name), node.gate));
    this.#chain = this.#chainView();
    this.#mining = new LeaderMining(
      {
        leader: () => this.#member(this.#leader),
        followers: () => this.#followers(),
        gates: () => this.#members.filter((m) => !m.exited).map((m) => m.gate),
        leaderHead: () => this.#leaderHead,
        leaderPool: () => this.#leaderPool,
        probeLeader: async () => {
          await this.#probeLeader();
        },
        handOverAll: () => this.#eachLiveFollower((m) => handOver(m, this.#chain)),
        spreadLeaderPool: () => this.#eachLiveFollower((m) => takeLeaderPool(m, this.#chain)),
        startRounds: () => this.#startRounds(),
        logger: this.#logger,
      },
      { blockTimeMs: options.blockTimeMs },
    );
    for (const [index, node] of nodes.entries()) {
      void node.exited.then(() => {
        this.#member(index).exited = true;
        this.#mining.progress();
        this.wake();
      });
    }
  }

  /** Checks that the nodes share a genesis block and starts the loop and the mining. */
  async start(): Promise<void> {
    const geneses = await Promise.all(
      this.#members.map((m) => m.rpc.call<RpcHead>('eth_getBlockByNumber', ['0x0', false])),
    );
    if (new Set(geneses.map((block) => block.hash)).size !== 1) {
      throw new Error('the nodes do not share a genesis block');
    }
    await this.#probeLeader();
    for (const m of this.#members) m.head = this.#leaderHead;
    this.#loop = this.#run();
    this.#mining.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#mining.stop();
    this.#wake?.();
    await this.#loop;
    await Promise.all(this.#members.map((m) => m.busy));
    await Promise.all(this.#members.map((m) => m.rpc.close()));
  }

  /** Starts a round now, or right after the current one. */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** A node's proxy passed on a transaction (synchronously, before its next request). */
  transaction(): void {
    this.#mining.transaction();
  }

  /** A mining call sent to any node (mining-control.ts), or undefined to let the node answer it. */
  intercept(body: Buffer): Promise<string> | undefined {
    const call: ControlCall | undefined = controlCall(body);
    return call === undefined ? undefined : this.#mining.control(call);
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

  #member(index: number): DevnetMember {
    return this.#members[index] as DevnetMember;
  }

  #followers(): DevnetMember[] {
    return this.#members.filter((m) => m.index !== this.#leader);
  }

  /** Runs `work` for every follower that runs and answers; one failing does not stop the others. */
  async #eachLiveFollower(work: (m: DevnetMember) => Promise<unknown>): Promise<void> {
    const live = this.#followers().filter((m) => !m.exited && !m.unreachable);
    await Promise.all(
      live.map((m) =>
        work(m).catch((err: unknown) =>
          this.#logger.debug('devnet: a follower missed a step', { node: m.rpc.name, err }),
        ),
      ),
    );
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
    if (this.#leaderLost()) await this.#failover(this.#member(this.#leader));
    const started = Date.now();
    if (await this.#probeLeader()) this.#mining.transaction();
    const leader = this.#member(this.#leader);
    if (leader.lastAnswer < started) {
      // No answer: a probe that timed out has already waited; probe again at once, fail over when due.
      if (this.#leaderLost()) await this.#failover(leader);
      else if (Date.now() - started >= this.#pollMs) this.#woken = true;
    }
    this.#startRounds();
  }

  #leaderLost(): boolean {
    const leader = this.#member(this.#leader);
    return leader.exited || Date.now() - leader.lastAnswer >= this.#failoverMs;
  }

  /** Starts a round for each follower that is not in one. */
  #startRounds(): void {
    const now = Date.now();
    for (const m of this.#members) {
      if (m.index === this.#leader || m.exited || this.#stopped) continue;
      if (m.unreachable && now - m.lastAnswer >= this.#failoverMs) refuseClients(m, 'not answering');
      if (m.busy !== undefined) continue;
      const headAtStart = this.#leaderHead;
      m.busy = followerRound(m, this.#chain)
        .catch((err: unknown) => this.#roundFailed(m, err))
        .finally(() => {
          m.busy = undefined;
          this.#mining.progress();
          if (this.#leaderHead !== headAtStart) this.wake(); // the leader moved on meanwhile
        });
    }
  }

  /** Reads the leader's latest block and pool; true when the pool has a pending transaction. */
  async #probeLeader(): Promise<boolean> {
    const leader = this.#member(this.#leader);
    const epoch = this.#epoch;
    let answers: NodeAnswer[];
    try {
      answers = await leader.rpc.batch([
        ['eth_getBlockByNumber', ['latest', false]],
        ['txpool_content', []],
      ]);
    } catch (err) {
      if (err instanceof NodeUnreachable) return false;
      throw err;
    }
    if (epoch !== this.#epoch) return false;
    leader.lastAnswer = Date.now();
    const [latest, pool] = answers;
    if (latest?.ok) {
      const block = latest.result as RpcHead;
      const head = { number: Number(block.number), hash: block.hash };
      if (head.hash !== this.#leaderHead.hash) this.#leaderHead = head;
      this.#leaderBlocks.seen(head.hash, epoch);
      leader.head = this.#leaderHead;
    }
    if (!pool?.ok) return false;
    const content = pool.result as TxPoolContent;
    this.#leaderPool = hashesOf(content);
    for (const hash of this.#leaderPool) this.#handed.add(hash);
    return Object.keys(content.pending ?? {}).length > 0;
  }

  async #failover(old: DevnetMember): Promise<void> {
    const distance = (m: DevnetMember): number => (m.index - old.index + this.#members.length) % this.#members.length;
    const candidates = this.#members
      .filter((m) => m !== old && !m.exited)
      .sort((a, b) => (b.head?.number ?? -1) - (a.head?.number ?? -1) || distance(a) - distance(b));
    for (const candidate of candidates) {
      await candidate.busy;
      try {
        const block = await candidate.rpc.call<RpcHead>('eth_getBlockByNumber', ['latest', false]);
        this.#leader = candidate.index;
        this.#epoch += 1;
        this.#handed.clear();
        this.#leaderPool = [];
        this.#leaderHead = { number: Number(block.number), hash: block.hash };
        candidate.head = this.#leaderHead;
        candidate.lastAnswer = Date.now();
        candidate.stuck = undefined;
        candidate.refusingSince = undefined;
        candidate.gate.accept(); // the leader is the chain
        refuseClients(old, 'no longer the leader');
        this.#noLeaderLogged = false;
        this.#logger.warn('devnet leader changed', {
          from: old.rpc.name,
          to: candidate.rpc.name,
          reason: old.exited ? 'exited' : `no answer for ${this.#failoverMs} ms`,
          height: this.#leaderHead.number,
        });
        this.#mining.leaderChanged();
        return;
      } catch (err) {
        this.#logger.debug('devnet: cannot promote node', { node: candidate.rpc.name, err });
      }
    }
    if (!this.#noLeaderLogged) this.#logger.error('devnet: no node can take over as leader', { old: old.rpc.name });
    this.#noLeaderLogged = true;
  }

  /** The replicator's state as a follower's round sees it (follower.ts). */
  #chainView(): FollowerContext {
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
      set head(head: NodeHead) {
        self.#leaderHead = head;
      },
      get leaderPool() {
        return self.#leaderPool;
      },
      get stopped() {
        return self.#stopped;
      },
      raws: this.#raws,
      logger: this.#logger,
      handed: this.#handed,
      leaderBlocks: this.#leaderBlocks,
      minePending: () => this.#mining.transaction(),
    };
  }

  #roundFailed(m: DevnetMember, err: unknown): void {
    const message = (err as Error)?.message ?? String(err);
    if (message === m.lastError) return;
    m.lastError = message;
    const level = err instanceof NodeUnreachable ? 'debug' : 'warn';
    this.#logger[level]('devnet: replication round failed', { node: m.rpc.name, err });
  }
}
