/**
 * Real local parts for notification tests: a webhook receiver (node:http on port 0) that records every
 * request and answers with a status the test chooses, an SMTP server (smtp-server on port 0) that
 * records every message, and store fixtures that write accounts, pools and `health_events` rows the
 * way the health engine does (the events table is the contract between the two areas).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { createLogger, type Logger } from '../../src/log.js';
import type { NotificationFilter } from '../../src/model/pool-schema.js';
import { insertPolicy, type PolicyMechanisms } from '../../src/notifications/queries/alert-policies.js';
import { insertDestination } from '../../src/notifications/queries/destinations.js';
import { verifyWebhook } from '../../src/notifications/signature.js';
import type { Store } from '../../src/store/database.js';
import type { StoreSecrets } from '../../src/store/store-secrets.js';
import type { HealthStatus } from '../../src/store/tables/health.js';
import { makeSelfSignedCert } from '../helpers/tls.js';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Status answered to the next requests (default 200). */
  status: number;
  /** When true, requests are recorded but never answered (a receiver hanging mid-request). */
  hold: boolean;
  /** Stops listening: connections are refused until `reopen()`. */
  down(): Promise<void>;
  reopen(): Promise<void>;
  close(): Promise<void>;
}

/** True when the request carries a Standard Webhooks signature made with `secret`. */
export function signedWith(secret: string, request: ReceivedRequest): boolean {
  return verifyWebhook({
    id: String(request.headers['webhook-id']),
    timestamp: String(request.headers['webhook-timestamp']),
    signature: String(request.headers['webhook-signature']),
    body: request.body,
    secret,
  });
}

export async function startReceiver(path = '/hook'): Promise<Receiver> {
  const receiver = { requests: [] as ReceivedRequest[], status: 200, hold: false } as Receiver;
  let server: Server;
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          receiver.requests.push({
            method: req.method ?? '',
            url: req.url ?? '',
            headers: req.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          });
          if (receiver.hold) return;
          res.writeHead(receiver.status, { 'content-type': 'text/plain', connection: 'close' });
          res.end('ok');
        });
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const port = await listen(0);
  receiver.port = port;
  receiver.url = `http://127.0.0.1:${port}${path}`;
  receiver.down = stop;
  receiver.reopen = async () => {
    await listen(port);
  };
  receiver.close = async () => {
    if (server.listening) await stop();
  };
  return receiver;
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** The MAIL FROM's BODY= parameter as the server recorded it (`7bit` when none was given). */
  bodyType: string;
}

export interface SmtpSink {
  url: string;
  messages: ReceivedMail[];
  /** Credentials the server accepted (to prove authentication happened). */
  logins: string[];
  /** Every AUTH the server received, accepted or not, and whether the session was TLS by then. */
  authAttempts: { user: string; secure: boolean }[];
  close(): Promise<void>;
}

export interface SmtpOptions {
  /**
   * Offer STARTTLS with a throwaway self-signed certificate (default true); the URL then carries
   * `?tls.rejectUnauthorized=false`, as an operator's would for such a relay. False: plain text only.
   */
  startTls?: boolean;
  /** Leave 8BITMIME out of the EHLO reply (default false: smtp-server advertises it). */
  hide8BitMime?: boolean;
}

/**
 * An SMTP server requiring AUTH PLAIN/LOGIN as user/pass, offering STARTTLS unless told not to (then
 * it accepts AUTH in clear text, which the mailer must not send by default). Recipients listed in
 * `rejected` are refused with a permanent 550 at RCPT TO, like an unknown mailbox.
 */
export async function startSmtp(
  user = 'mailer',
  pass = `pw-${randomBytes(6).toString('hex')}`,
  rejected: readonly string[] = [],
  options: SmtpOptions = {},
): Promise<SmtpSink> {
  const startTls = options.startTls ?? true;
  const certDir = startTls ? mkdtempSync(join(tmpdir(), 'switchyard-smtp-')) : undefined;
  const cert = certDir === undefined ? undefined : makeSelfSignedCert(certDir, '/CN=localhost', '127.0.0.1');
  const sink = { messages: [] as ReceivedMail[], logins: [] as string[], authAttempts: [] } as unknown as SmtpSink;
  const server = new SMTPServer({
    // hideSTARTTLS alone still upgrades a client that asks anyway; disabling the command refuses it.
    hideSTARTTLS: !startTls,
    hide8BITMIME: options.hide8BitMime === true,
    ...(startTls ? {} : { disabledCommands: ['STARTTLS'] }),
    ...(cert === undefined ? {} : { key: readFileSync(cert.key), cert: readFileSync(cert.cert) }),
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, session, callback) {
      sink.authAttempts.push({ user: auth.username ?? '', secure: session.secure });
      if (auth.username === user && auth.password === pass) {
        sink.logins.push(auth.username ?? '');
        callback(null, { user: auth.username });
      } else {
        callback(new Error('Invalid username or password'));
      }
    },
    onRcptTo(address, _session, callback) {
      if (!rejected.includes(address.address)) return callback();
      const err = new Error('5.1.1 mailbox unavailable') as Error & { responseCode: number };
      err.responseCode = 550;
      return callback(err);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom;
        sink.messages.push({
          from: from === false ? '' : from.address,
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          bodyType: session.envelope.bodyType ?? '7bit',
        });
        callback();
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.server.address() as AddressInfo).port));
  });
  sink.url = `smtp://${user}:${pass}@127.0.0.1:${port}${startTls ? '/?tls.rejectUnauthorized=false' : ''}`;
  sink.close = () =>
    new Promise<void>((resolve) => server.close(() => resolve())).finally(() => {
      if (certDir !== undefined) rmSync(certDir, { recursive: true, force: true });
    });
  return sink;
}

/** A logger that keeps every line, to assert what was (not) logged. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }), lines };
}

export function newAccountId(): string {
  return randomBytes(16).toString('hex');
}

export async function insertAccount(store: Store, id: string = newAccountId()): Promise<string> {
  await store.db
    .insertInto('accounts')
    .values({ id, name: `account ${id.slice(0, 6)}`, created_on: new Date().toISOString() })
    .execute();
  return id;
}

export interface PoolFixture {
  name: string;
  notification_email?: string;
  notification_filter?: NotificationFilter | null;
  /** The origins' addresses as stored, unchecked (o0, o1, …); default one origin at http://127.0.0.1:1. */
  addresses?: string[];
}

/** Inserts a pool row directly, bypassing the API's checks; returns its id. */
export async function insertPool(store: Store, accountId: string, fixture: PoolFixture): Promise<string> {
  const id = randomBytes(16).toString('hex');
  const now = new Date().toISOString();
  await store.db
    .insertInto('pools')
    .values({
      id,
      account_id: accountId,
      name: fixture.name,
      notification_email: fixture.notification_email ?? '',
      monitor_id: null,
      enabled: 1,
      settings: JSON.stringify({
        description: '',
        minimum_origins: 1,
        notification_filter: fixture.notification_filter ?? null,
        origins: (fixture.addresses ?? ['http://127.0.0.1:1']).map((address, i) => ({
          name: `o${i}`,
          address,
          enabled: true,
          weight: 1,
          header: {},
        })),
        origin_steering: { policy: 'random' },
        check_regions: null,
      }),
      created_on: now,
      modified_on: now,
    })
    .execute();
  return id;
}

export interface HealthPolicyFixture {
  /** The policy's name. */
  name: string;
  mechanisms: PolicyMechanisms;
  /** Default: a random UUID. */
  id?: string;
  /** `created`/`modified` (default: the wall clock). */
  at?: string;
}

/** Inserts an enabled health-alert policy with no filters (every event of the account); returns its id. */
export async function insertHealthPolicy(
  store: Store,
  accountId: string,
  fixture: HealthPolicyFixture,
): Promise<string> {
  const id = fixture.id ?? randomUUID();
  const input = {
    name: fixture.name,
    description: '',
    enabled: true,
    alert_type: 'load_balancing_health_alert',
    mechanisms: fixture.mechanisms,
    filters: {},
    alert_interval: null,
  };
  await insertPolicy(store.db, accountId, id, input, fixture.at ?? new Date().toISOString());
  return id;
}

export interface WebhookPolicyFixture {
  /** The policy's name. */
  name: string;
  url: string;
  secret?: string | null;
  /** `created`/`modified` of both rows (default: the wall clock). */
  at?: string;
}

/** Inserts a webhook destination and a health policy (insertHealthPolicy) sending to it; returns the destination id. */
export async function insertWebhookPolicy(
  store: Store,
  secrets: StoreSecrets,
  accountId: string,
  fixture: WebhookPolicyFixture,
): Promise<string> {
  const destination = randomUUID();
  const at = fixture.at ?? new Date().toISOString();
  const target = { name: 'r', url: fixture.url, secret: fixture.secret ?? null };
  await insertDestination(store.db, secrets, accountId, destination, target, at);
  await insertHealthPolicy(store, accountId, {
    name: fixture.name,
    mechanisms: { webhooks: [{ id: destination }] },
    at,
  });
  return destination;
}

export async function setNotificationEmail(store: Store, poolId: string, value: string): Promise<void> {
  await store.db.updateTable('pools').set({ notification_email: value }).where('id', '=', poolId).execute();
}

export interface EventFixture {
  account_id: string;
  pool_id: string;
  pool_name: string;
  event_source?: 'pool' | 'origin';
  origin_name?: string;
  origin_address?: string;
  previous?: HealthStatus | 'Unknown';
  new_health: HealthStatus;
  reason?: string;
  occurred_at?: string;
}

/** Writes one health event as the health engine would; returns its id. */
export async function insertEvent(store: Store, event: EventFixture): Promise<string> {
  const id = randomUUID();
  const source = event.event_source ?? 'origin';
  await store.db
    .insertInto('health_events')
    .values({
      id,
      account_id: event.account_id,
      event_source: source,
      pool_id: event.pool_id,
      pool_name: event.pool_name,
      origin_name: source === 'origin' ? (event.origin_name ?? 'o0') : null,
      origin_address: source === 'origin' ? (event.origin_address ?? 'http://127.0.0.1:1') : null,
      previous: event.previous ?? (event.new_health === 'Healthy' ? 'Unhealthy' : 'Healthy'),
      new_health: event.new_health,
      reason: event.reason ?? (event.new_health === 'Healthy' ? 'check passed' : 'connection refused'),
      occurred_at: event.occurred_at ?? new Date().toISOString(),
    })
    .execute();
  return id;
}

export interface ParsedMail {
  headers: Record<string, string>;
  text: string;
}

/** Splits a single-part RFC 5322 message into unfolded headers (lower-case names) and decoded text. */
export function parseMail(raw: string): ParsedMail {
  const split = raw.indexOf('\r\n\r\n');
  assertTrue(split > 0, 'a message has a header block ended by an empty CRLF line');
  const headers: Record<string, string> = {};
  for (const line of raw
    .slice(0, split)
    .replace(/\r\n[ \t]+/g, ' ')
    .split('\r\n')) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = raw.slice(split + 4);
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  let text: string;
  if (encoding === 'quoted-printable') {
    const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => `%${hex}`);
    text = decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/gi, '%25'));
  } else if (encoding === 'base64') {
    text = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  } else {
    text = body;
  }
  return { headers, text: text.replace(/\r\n/g, '\n') };
}

function assertTrue(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** Waits until `check()` is truthy, polling every 20 ms, failing after `timeoutMs`. Not a sleep: a bounded wait on a condition. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
