/**
 * The control process's gateway workers (SPEC §11, `gateway.workers` > 1), over node:cluster: forks
 * `workers` processes running worker-entry.ts, which share the gateway listener's port (the control
 * process accepts and hands connections out round-robin — node's default on Linux, even under load,
 * unlike leaving it to the kernel, which favours the busiest process).
 *
 * Start: each worker gets its `init` (publisher.ts) when it says `hello`; start resolves once every
 * worker answered `ready` (their URLs are the same) and rejects, with the worker's errno code, if one
 * could not start (e.g. EADDRINUSE) or none is ready within START_TIMEOUT_MS (60 s).
 *
 * Crash: a worker that exits while the control is not stopping is logged (error, with its slot, pid, exit
 * code and signal), counted (`switchyard_gateway_worker_restarts_total`) and replaced in the same slot
 * after a back-off: RESTART_MIN_MS (100 ms), doubling for each further crash of that slot up to
 * RESTART_MAX_MS (10 s); a worker that stayed up STABLE_MS (30 s) resets it. Other workers keep serving.
 * A worker that drained on a signal of its own waits at least SIGNALLED_RESTART_MS (1 s): when the signal
 * went to the whole process group (systemd, Ctrl-C) the control is stopping too and starts none.
 *
 * Stop (`close`, on SIGTERM): every worker gets `shutdown` and drains (listener closed, in-flight
 * requests finish within the grace period, WebSocket 1001); those not gone after the grace period plus
 * KILL_AFTER_MS (5 s) are killed.
 *
 * Metrics: `switchyard_gateway_workers` (workers serving now); `gather` asks each ready worker for its
 * registry (METRICS_TIMEOUT_MS, 1 s; a silent worker is left out of that scrape) and adds
 * `switchyard_gateway_worker_requests_total{worker}` (each slot's HTTP requests, to see the balance).
 */
import cluster, { type Worker } from 'node:cluster';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { MetricFamily, MetricsRegistry } from '../metrics/registry.js';
import { type ControlMessage, isMessage, type WorkerMessage } from './messages.js';

export const START_TIMEOUT_MS = 60_000;
export const RESTART_MIN_MS = 100;
export const RESTART_MAX_MS = 10_000;
export const STABLE_MS = 30_000;
export const SIGNALLED_RESTART_MS = 1_000;
export const KILL_AFTER_MS = 5_000;
export const METRICS_TIMEOUT_MS = 1_000;

export interface WorkerSupervisorOptions {
  workers: number;
  /** How long a worker lived is measured on its monotonic time (restart back-off). */
  clock: Clock;
  logger: Logger;
  metrics: MetricsRegistry;
  /** The `init` of the worker of this slot, built when it is forked. */
  init(slot: number): ControlMessage;
  /** Every message of a worker but `hello`, `ready`, `failed` and `metrics`; `reply` answers that worker. */
  onMessage(message: WorkerMessage, reply: (message: ControlMessage) => void): void;
}

interface WorkerSlot {
  readonly slot: number;
  worker: Worker | undefined;
  /** Has had its `init`: later state goes to it as messages (earlier state is in the init). */
  initialised: boolean;
  ready: boolean;
  /** The worker got a signal itself: maybe the whole process group's, so its restart waits SIGNALLED_RESTART_MS. */
  signalled: boolean;
  /** When the worker was forked (the clock's monotonic ms). */
  startedAt: number;
  crashes: number;
  restart: NodeJS.Timeout | undefined;
}

interface Asked {
  resolve(families: MetricFamily[]): void;
}

export class WorkerSupervisor {
  readonly #options: WorkerSupervisorOptions;
  readonly #slots: WorkerSlot[] = [];
  readonly #asked = new Map<number, Asked>();
  readonly #restarts;
  #nextAsk = 1;
  #closing = false;
  #url: string | undefined;
  #starting:
    | { resolve(url: string): void; reject(err: Error): void; waiting: number; timer: NodeJS.Timeout }
    | undefined;

  private constructor(options: WorkerSupervisorOptions) {
    this.#options = options;
    this.#restarts = options.metrics.counter(
      'switchyard_gateway_worker_restarts_total',
      'Gateway worker processes replaced after they exited unexpectedly',
    );
    this.#restarts.inc({}, 0);
    options.metrics.gauge(
      'switchyard_gateway_workers',
      'Gateway worker processes serving now',
      [],
      () => this.#slots.filter((slot) => slot.ready).length,
    );
  }

  /** Forks the workers; resolves with the gateway URL once all serve. */
  static async start(options: WorkerSupervisorOptions): Promise<WorkerSupervisor> {
    const supervisor = new WorkerSupervisor(options);
    const here = fileURLToPath(import.meta.url);
    // worker-entry.js under dist/, worker-entry.ts under tsx (the workers inherit this process's execArgv).
    cluster.setupPrimary({
      exec: fileURLToPath(new URL(`./worker-entry${extname(here)}`, import.meta.url)),
      args: [],
      serialization: 'advanced',
    });
    const ready = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`gateway workers not ready within ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      );
      supervisor.#starting = { resolve, reject, waiting: options.workers, timer };
    });
    for (let slot = 1; slot <= options.workers; slot += 1) {
      const entry: WorkerSlot = {
        slot,
        worker: undefined,
        initialised: false,
        ready: false,
        signalled: false,
        startedAt: 0,
        crashes: 0,
        restart: undefined,
      };
      supervisor.#slots.push(entry);
      supervisor.#fork(entry);
    }
    try {
      supervisor.#url = await ready;
    } catch (err) {
      await supervisor.close(0);
      throw err;
    } finally {
      if (supervisor.#starting !== undefined) clearTimeout(supervisor.#starting.timer);
      supervisor.#starting = undefined;
    }
    return supervisor;
  }

  /** The gateway listener's URL (every worker's). */
  get url(): string {
    return this.#url ?? '';
  }

  /** The PIDs of the workers serving now, by slot (tests, logs). */
  pids(): number[] {
    return this.#slots.flatMap((slot) => (slot.ready && slot.worker?.process.pid ? [slot.worker.process.pid] : []));
  }

  /** Sends to every worker that has had its `init` (a worker forked later gets the state in its init). */
  broadcast(message: ControlMessage): void {
    for (const slot of this.#slots) {
      const worker = slot.worker;
      if (slot.initialised && worker?.isConnected()) worker.send(message);
    }
  }

  /** Each ready worker's metric families ([worker slot label, families]); silent workers are left out. */
  async gather(): Promise<MetricFamily[][]> {
    const answers = await Promise.all(
      this.#slots.map(async (slot) => {
        const worker = slot.worker;
        if (!slot.ready || worker === undefined || !worker.isConnected()) return undefined;
        const id = this.#nextAsk++;
        const families = await new Promise<MetricFamily[] | undefined>((resolve) => {
          const timer = setTimeout(() => {
            this.#asked.delete(id);
            resolve(undefined);
          }, METRICS_TIMEOUT_MS);
          this.#asked.set(id, {
            resolve: (value) => {
              clearTimeout(timer);
              resolve(value);
            },
          });
          worker.send({ t: 'metrics-ask', id } satisfies ControlMessage);
        });
        return families === undefined ? undefined : { slot: slot.slot, families };
      }),
    );
    const present = answers.filter((answer) => answer !== undefined);
    return [...present.map((answer) => answer.families), [perWorkerRequests(present)]];
  }

  /** Drains every worker (grace period for their in-flight requests); kills what is left after it. */
  async close(graceMs: number): Promise<void> {
    this.#closing = true;
    const exits: Array<Promise<void>> = [];
    for (const slot of this.#slots) {
      if (slot.restart !== undefined) clearTimeout(slot.restart);
      const worker = slot.worker;
      if (worker === undefined || worker.isDead()) continue;
      exits.push(new Promise((resolve) => worker.once('exit', () => resolve())));
      if (worker.isConnected()) worker.send({ t: 'shutdown', graceMs } satisfies ControlMessage);
      else worker.process.kill('SIGTERM');
    }
    const timer = setTimeout(() => {
      for (const slot of this.#slots)
        if (slot.worker !== undefined && !slot.worker.isDead()) slot.worker.kill('SIGKILL');
    }, graceMs + KILL_AFTER_MS);
    await Promise.all(exits);
    clearTimeout(timer);
  }

  #fork(slot: WorkerSlot): void {
    const worker = cluster.fork();
    slot.worker = worker;
    slot.initialised = false;
    slot.ready = false;
    slot.signalled = false;
    slot.startedAt = this.#options.clock.monotonic();
    worker.on('message', (message: unknown) => {
      if (!isMessage<WorkerMessage>(message)) return;
      this.#message(slot, worker, message);
    });
    worker.on('error', (err) => this.#options.logger.debug('gateway worker channel error', { slot: slot.slot, err }));
    worker.once('exit', (code, signal) => this.#exited(slot, worker, code, signal));
  }

  #message(slot: WorkerSlot, worker: Worker, message: WorkerMessage): void {
    switch (message.t) {
      case 'hello':
        // Stopping already: a worker that has not started serving has nothing to drain.
        if (this.#closing) {
          worker.process.kill('SIGTERM');
          break;
        }
        worker.send(this.#options.init(slot.slot));
        slot.initialised = true;
        break;
      case 'ready':
        slot.ready = true;
        this.#options.logger.debug('gateway worker serving', { slot: slot.slot, pid: worker.process.pid });
        if (this.#starting !== undefined && --this.#starting.waiting === 0) this.#starting.resolve(message.url);
        break;
      case 'draining':
        slot.signalled = true;
        break;
      case 'failed':
        this.#starting?.reject(
          Object.assign(new Error(`gateway worker ${slot.slot}: ${message.message}`), { code: message.code }),
        );
        break;
      case 'metrics':
        this.#asked.get(message.id)?.resolve(message.families);
        this.#asked.delete(message.id);
        break;
      default:
        this.#options.onMessage(message, (reply) => {
          if (worker.isConnected()) worker.send(reply);
        });
    }
  }

  #exited(slot: WorkerSlot, worker: Worker, code: number | null, signal: string | null): void {
    if (slot.worker !== worker) return;
    slot.ready = false;
    if (this.#closing || this.#starting !== undefined) {
      this.#starting?.reject(new Error(`gateway worker ${slot.slot} exited during start-up (code ${code})`));
      return;
    }
    const upMs = this.#options.clock.monotonic() - slot.startedAt;
    slot.crashes = upMs >= STABLE_MS ? 1 : slot.crashes + 1;
    const backoff = Math.min(RESTART_MAX_MS, RESTART_MIN_MS * 2 ** (slot.crashes - 1));
    // A signal to the whole group reaches this process a moment later: it stops instead of restarting.
    const delay = slot.signalled ? Math.max(backoff, SIGNALLED_RESTART_MS) : backoff;
    this.#restarts.inc();
    this.#options.logger.error('gateway worker exited; starting a new one', {
      slot: slot.slot,
      pid: worker.process.pid,
      code,
      signal,
      restart_in_ms: delay,
    });
    slot.restart = setTimeout(() => {
      slot.restart = undefined;
      if (!this.#closing) this.#fork(slot);
    }, delay);
  }
}

/** `switchyard_gateway_worker_requests_total{worker}`: each worker's HTTP requests answered. */
function perWorkerRequests(answers: ReadonlyArray<{ slot: number; families: MetricFamily[] }>): MetricFamily {
  return {
    name: 'switchyard_gateway_worker_requests_total',
    help: 'Gateway HTTP requests answered, by worker slot (the summed total is switchyard_gateway_requests_total)',
    type: 'counter',
    labelNames: ['worker'],
    samples: answers.map(({ slot, families }) => ({
      labels: { worker: String(slot) },
      value:
        families
          .find((family) => family.name === 'switchyard_gateway_requests_total')
          ?.samples.reduce((sum, sample) => sum + sample.value, 0) ?? 0,
    })),
  };
}
