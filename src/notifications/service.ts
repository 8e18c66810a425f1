/**
 * The notification service: dispatchers (health events, chain incidents and transaction state changes →
 * deliveries: dispatcher.ts, incident-dispatch.ts, transaction-dispatch.ts), deprecation notices, and sender
 * (deliveries → webhooks and email), wired to one store, clock and mailer.
 *
 * - `runOnce()` runs one full pass deterministically: dispatch every available event, queue due
 *   deprecation notices, send every due delivery. Tests drive time with a ManualClock and call it.
 * - `start()` runs the same work in the background for `serve`: a pass at once (so deliveries that came
 *   due while the process was down go out right after start), then every POLL_MS (500 ms), or at once
 *   on `wake()` (the health monitor calls it when this process recorded events; a wake during a pass
 *   runs another pass right after it); deprecation notices at most every DEPRECATION_PASS_MS (60 s).
 *   The poll stays for what other processes write (events, deliveries coming due). Old finished
 *   deliveries, history and dispatched events are pruned (notifications/queries/retention.ts) at start and then at most
 *   every PRUNE_PASS_MS (1 h); `runOnce()` prunes too.
 *   Passes never overlap. `stop()` waits for the running pass; unsent deliveries stay queued.
 * - On the embedded SQLite store one process owns the database, so leases left by a killed process
 *   are dropped at start; on PostgreSQL they expire after the lease (webhooks.timeout + 2 min).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { type Clock, systemClock } from '../clock.js';
import { apiBaseUrl } from '../config/api-url.js';
import { DEFAULTS } from '../config/defaults.js';
import type { Config } from '../config/schema.js';
import { type Logger, silentLogger } from '../log.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import { maskAddress } from '../model/origin-address.js';
import type { OutboundPolicy } from '../outbound/policy.js';
import type { Store } from '../store/database.js';
import type { Opener } from '../store/store-secrets.js';
import { DeprecationNotices } from './deprecation.js';
import { Dispatcher } from './dispatcher.js';
import { IncidentDispatch } from './incident-dispatch.js';
import { createMailer, type Mailer, smtpUrlHasCredentials } from './mailer.js';
import { releaseAllLeases } from './queries/outbox.js';
import { type Pruned, pruneNotificationData } from './queries/retention.js';
import { DeliverySender } from './sender.js';
import { TransactionDispatch } from './transaction-dispatch.js';
import { WebhookClient } from './webhook.js';

const POLL_MS = 500;
const DEPRECATION_PASS_MS = 60_000;
const PRUNE_PASS_MS = 3_600_000;

export type NotificationConfig = Pick<
  Config,
  'data_dir' | 'smtp_url' | 'mail_from' | 'deprecation_notice_interval' | 'webhooks' | 'api'
> &
  Partial<Pick<Config, 'notification_retention' | 'smtp_allow_insecure_auth'>>;

export interface NotificationServiceOptions {
  store: Store;
  /** Opens the webhook destinations' sealed URLs and secrets (store/store-secrets.ts). */
  secrets: Opener;
  config: Readonly<NotificationConfig>;
  clock?: Clock;
  logger?: Logger;
  /** Replaces the SMTP / outbox mailer built from the config. */
  mailer?: Mailer;
  /** Base URL of the management API shown in emails; default from `api.listen`. */
  apiBase?: string;
  /** Jitter source for retry back-off, [0, 1). */
  random?: () => number;
  /** Where `switchyard_notification_*` metrics are registered. */
  metrics?: MetricsRegistry;
  /** Poll interval of the background loop (default POLL_MS, 500 ms). */
  pollMs?: number;
  /** The outbound target policy webhooks follow: the one built from the config (main.ts). */
  outbound: OutboundPolicy;
}

export interface PassResult {
  events: number;
  notices: number;
  attempts: number;
}

export class NotificationService {
  readonly #store: Store;
  readonly #logger: Logger;
  readonly #mailer: Mailer;
  readonly #webhooks: WebhookClient;
  readonly #dispatcher: Dispatcher;
  readonly #incidents: IncidentDispatch;
  readonly #transactions: TransactionDispatch;
  readonly #deprecation: DeprecationNotices;
  readonly #sender: DeliverySender;
  #running = false;
  #loop: Promise<void> | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  #wakeUp: (() => void) | undefined;
  #wakeRequested = false;
  #lastDeprecationPass = Number.NEGATIVE_INFINITY;
  readonly #pollMs: number;
  readonly #clock: Clock;
  readonly #retentionMs: number;
  #lastPrune = Number.NEGATIVE_INFINITY;

  constructor(options: NotificationServiceOptions) {
    const { store, config } = options;
    const clock = options.clock ?? systemClock;
    const logger = (options.logger ?? silentLogger).child({ component: 'notifications' });
    const apiBase = options.apiBase ?? apiBaseUrl(config.api);
    this.#store = store;
    this.#logger = logger;
    this.#pollMs = options.pollMs ?? POLL_MS;
    this.#clock = clock;
    this.#retentionMs = config.notification_retention ?? DEFAULTS.notification_retention;
    this.#mailer =
      options.mailer ??
      createMailer({
        smtpUrl: config.smtp_url,
        dataDir: config.data_dir,
        from: config.mail_from,
        allowInsecureAuth: config.smtp_allow_insecure_auth,
      });
    this.#webhooks = new WebhookClient({
      outbound: options.outbound,
      denyPrivate: config.webhooks.deny_private,
      timeoutMs: config.webhooks.timeout,
    });
    this.#dispatcher = new Dispatcher({ store, clock, logger, apiBase });
    this.#incidents = new IncidentDispatch({ store, clock, logger, apiBase });
    this.#transactions = new TransactionDispatch({ store, clock, logger, apiBase });
    this.#deprecation = new DeprecationNotices({
      store,
      clock,
      logger,
      intervalMs: config.deprecation_notice_interval,
      apiBase,
    });
    const attempts = options.metrics?.counter(
      'switchyard_notification_attempts_total',
      'Notification delivery attempts by mechanism and outcome (sent, retry, dead, cancelled)',
      ['mechanism_type', 'outcome'],
    );
    this.#sender = new DeliverySender({
      store,
      secrets: options.secrets,
      clock,
      logger,
      mailer: this.#mailer,
      webhooks: this.#webhooks,
      owner: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
      leaseMs: config.webhooks.timeout + 120_000,
      ...(options.random ? { random: options.random } : {}),
      onOutcome: (outcome, mechanismType) => attempts?.inc({ mechanism_type: mechanismType, outcome }),
    });
    logger.info('notifications ready', {
      mail: this.#mailer.kind === 'smtp' && config.smtp_url ? maskAddress(config.smtp_url) : 'outbox',
    });
    if (config.smtp_allow_insecure_auth === true && config.smtp_url?.startsWith('smtp://')) {
      if (smtpUrlHasCredentials(config.smtp_url)) {
        logger.warn(
          'smtp_allow_insecure_auth is on: the SMTP password is sent in clear text to a server without STARTTLS',
        );
      }
    }
  }

  /** One full pass: dispatch, deprecation notices, send everything due. Serialised with the loop's passes. */
  runOnce(): Promise<PassResult> {
    return this.#serialise(async () => {
      const result = await this.#pass(true);
      await this.prune();
      return result;
    });
  }

  /** Deletes what is older than `notification_retention` (never undelivered alerts); 0 keeps all. */
  async prune(): Promise<Pruned | undefined> {
    if (this.#retentionMs === 0) return undefined;
    const cutoff = new Date(this.#clock.now() - this.#retentionMs).toISOString();
    const pruned = await pruneNotificationData(this.#store.db, cutoff);
    if (pruned.history + pruned.deliveries + pruned.events > 0) {
      this.#logger.info('pruned old notification data', { ...pruned, older_than: cutoff });
    }
    return pruned;
  }

  /** Starts the background loop (idempotent). */
  async start(): Promise<void> {
    if (this.#running) return;
    if (this.#store.dialect === 'sqlite') await releaseAllLeases(this.#store.db);
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Asks the loop for a pass now (e.g. after health events were written in this process). */
  wake(): void {
    this.#wakeRequested = true;
    this.#wakeUp?.();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.wake();
    await this.#loop;
    await this.#chain.catch(() => undefined);
    this.#mailer.close();
    await this.#webhooks.close();
  }

  async #run(): Promise<void> {
    while (this.#running) {
      this.#wakeRequested = false;
      const deprecationDue = this.#clock.monotonic() - this.#lastDeprecationPass >= DEPRECATION_PASS_MS;
      try {
        await this.#serialise(() => this.#pass(deprecationDue));
        if (deprecationDue) this.#lastDeprecationPass = this.#clock.monotonic();
        if (this.#clock.monotonic() - this.#lastPrune >= PRUNE_PASS_MS) {
          this.#lastPrune = this.#clock.monotonic();
          await this.#serialise(() => this.prune());
        }
      } catch (err) {
        this.#logger.error('notification pass failed; retrying', { err });
      }
      if (!this.#running) break;
      if (this.#wakeRequested) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#pollMs);
        this.#wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wakeUp = undefined;
    }
  }

  #serialise<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(work, work);
    this.#chain = next.catch(() => undefined);
    return next;
  }

  async #pass(withDeprecation: boolean): Promise<PassResult> {
    const events = (await this.#dispatcher.pass()) + (await this.#incidents.pass()) + (await this.#transactions.pass());
    const notices = withDeprecation ? await this.#deprecation.pass() : 0;
    const attempts = await this.#sender.pass();
    return { events, notices, attempts };
  }
}
