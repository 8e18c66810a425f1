/**
 * SPEC §8 "Origin addresses", end to end: a real origin (node:http on port 0) that REQUIRES Basic auth and
 * a keyed path + query (`http://apiuser:PASS@127.0.0.1:<port>/v3/<KEY>?apikey=<K>`), forwarding to a real
 * anvil. The jsonrpc monitor must reach it exactly as the gateway does (it reports Healthy), the gateway
 * forwards calls, and after the origin goes Unhealthy and back (events, webhook alerts, history, email)
 * none of the secrets — nor the Basic credentials they make — appears in any API answer (read-write and
 * read-only tokens), log line, webhook payload, history entry, email, event row or metric.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { rpc } from '../helpers/http.js';
import { type KeyedOrigin, startKeyedOrigin } from '../helpers/keyed-origin.js';
import { type TestStoreLocation, testStoreLocation } from '../helpers/store.js';
import { capturingLogger, type Receiver, startReceiver, waitFor } from '../notifications/helpers.js';

const USER = 'apiuser';
const PASS = 'Pa55-w0rd-Zq7';
const KEY = '9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const K = 'qk-Xy81-apikey';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASS}`).toString('base64')}`;
const SECRETS = [PASS, KEY, K, BASIC.slice('Basic '.length)];
const PATH = `/v3/${KEY}?apikey=${K}`;

describe('an origin with Basic auth and a keyed path', () => {
  let anvil: AnvilNode;
  let origin: KeyedOrigin;
  let receiver: Receiver;
  let app: TestApp;
  let location: TestStoreLocation;
  const captured = capturingLogger();
  let token = '';
  let readToken = '';
  let poolId = '';

  const api = async (method: string, path: string, body?: unknown, as = token) => {
    const res = await fetch(`${app.apiUrl}/accounts/${app.config.account_id}${path}`, {
      method,
      headers: { authorization: `Bearer ${as}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, json: JSON.parse(text) as { result: unknown } };
  };
  const answers: string[] = [];
  const read = async (path: string, as = token) => {
    const res = await api('GET', path, undefined, as);
    answers.push(res.text);
    return res;
  };
  const originHealth = async () => {
    const { json } = await read(`/load_balancers/pools/${poolId}/health`);
    const checker = (json.result as { pop_health: Record<string, { origins: Record<string, unknown>[] }> }).pop_health
      .switchyard;
    return Object.values(checker?.origins[0] ?? {})[0] as { healthy: boolean; failure_reason: string } | undefined;
  };

  before(async () => {
    anvil = await startTestAnvil();
    origin = await startKeyedOrigin(anvil.url, { user: USER, pass: PASS, path: PATH });
    receiver = await startReceiver();
    location = await testStoreLocation();
    app = await startApp(
      {
        ...(location.database_url === undefined ? {} : { database_url: location.database_url }),
        log_level: 'debug',
        networks: { sepolia: { chain_id: 11_155_111, pools: ['keyed'] } },
        pools: [
          {
            name: 'keyed',
            origins: [{ name: 'node', address: origin.address }],
            notification_email: 'legacy@example.com',
            monitor: { type: 'jsonrpc', interval: 1, timeout: 2, retries: 0, consecutive_down: 1, consecutive_up: 1 },
          },
        ],
      },
      { logger: captured.logger },
    );
    const account = app.config.account_id;
    token = (await createToken(app.store.db, systemClock, { accountId: account, readOnly: false })).token;
    readToken = (await createToken(app.store.db, systemClock, { accountId: account, readOnly: true })).token;
    const pools = await api('GET', '/load_balancers/pools');
    poolId = (pools.json.result as { id: string }[])[0]?.id ?? '';
    const hook = await api('POST', '/alerting/v3/destinations/webhooks', { name: 'ops', url: receiver.url });
    assert.equal(hook.status, 201, hook.text);
    const policy = await api('POST', '/alerting/v3/policies', {
      name: 'all health',
      alert_type: 'load_balancing_health_alert',
      enabled: true,
      mechanisms: {
        webhooks: [{ id: (hook.json.result as { id: string }).id }],
        email: [{ id: 'policy@example.com' }],
      },
    });
    assert.equal(policy.status, 200, policy.text);
  });

  after(async () => {
    await app?.close();
    await receiver?.close();
    await origin?.close();
    await anvil?.stop();
    location?.cleanup();
  });

  it('the jsonrpc monitor reaches it as the gateway does and reports Healthy; the gateway forwards', async () => {
    await waitFor(async () => (await originHealth())?.failure_reason === 'No failures', 'a passed check', 20_000);
    const chain = await rpc(app.rpcUrl('sepolia'), 'eth_chainId');
    assert.equal(chain.answer.result, '0xaa36a7');
    const head = await rpc(app.rpcUrl('sepolia'), 'eth_blockNumber');
    assert.match(String(head.answer.result), /^0x[0-9a-f]+$/);
    assert.ok(origin.seen.length >= 5, 'probes and calls arrived');
    for (const request of origin.seen) {
      assert.deepEqual(
        request,
        { url: PATH, authorization: BASIC, method: 'POST', header: undefined },
        'one request shape for all',
      );
    }
  });

  it('goes Unhealthy and back; no secret in answers, logs, alerts, history, email, events or metrics', async () => {
    const alerts = (event: string) =>
      receiver.requests.filter((r) => (JSON.parse(r.body) as { alert_event?: string }).alert_event === event);
    origin.state.broken = true;
    await waitFor(() => alerts('ALERT_STATE_EVENT_START').length >= 1, 'webhook START', 20_000);
    const down = await originHealth();
    assert.equal(down?.healthy, false);
    assert.match(down?.failure_reason ?? '', /HTTP 503/);
    origin.state.broken = false;
    await waitFor(() => alerts('ALERT_STATE_EVENT_END').length >= 1, 'webhook END', 20_000);
    await waitFor(async () => (await originHealth())?.healthy === true, 'Healthy again', 20_000);

    const start = JSON.parse(alerts('ALERT_STATE_EVENT_START')[0]?.body ?? '{}') as { data: Record<string, unknown> };
    const originStart =
      start.data.event_source === 'origin'
        ? start
        : (alerts('ALERT_STATE_EVENT_START')
            .map((r) => JSON.parse(r.body) as { data: Record<string, unknown> })
            .find((a) => a.data.event_source === 'origin') ?? start);
    assert.equal(
      originStart.data.origin_address,
      `http://***:***@127.0.0.1:${new URL(origin.address).port}/v3/***?apikey=***`,
    );

    const history = await waitFor(async () => {
      const res = await read('/alerting/v3/history?per_page=100');
      return (res.json.result as unknown[]).length >= 4 ? res : undefined;
    }, 'history entries');
    assert.ok(history.text.includes('***'));
    for (const as of [token, readToken]) {
      await read('/load_balancers/pools', as);
      await read(`/load_balancers/pools/${poolId}`, as);
      await read(`/load_balancers/pools/${poolId}/health`, as);
      await read('/alerting/v3/history', as);
    }
    const outbox = join(app.dataDir, 'outbox');
    const mails = await waitFor(() => {
      try {
        const files = readdirSync(outbox).map((file) => readFileSync(join(outbox, file), 'utf8'));
        return files.length >= 3 ? files : undefined;
      } catch {
        return undefined;
      }
    }, 'alert emails in the outbox');
    assert.ok(
      mails.some((mail) => mail.includes('***')),
      'emails name the origin, masked',
    );
    const events = await app.store.db.selectFrom('health_events').select('origin_address').execute();
    assert.ok(events.some((event) => event.origin_address?.includes('***')));
    const metrics = await (await fetch(app.apiUrl.replace(/\/client\/v4$/, '/metrics'))).text();

    const places: Array<[string, string[]]> = [
      ['API answers', answers],
      ['log lines', captured.lines],
      ['webhook payloads', receiver.requests.map((r) => `${r.url} ${JSON.stringify(r.headers)} ${r.body}`)],
      ['emails', mails],
      ['health events', events.map((event) => String(event.origin_address))],
      ['metrics', [metrics]],
    ];
    // Mail bodies may be quoted-printable or base64: look for the secrets in decoded forms too.
    const decoded = (text: string) => [
      text,
      text.replace(/=\r?\n/g, ''),
      Buffer.from(text, 'base64').toString('latin1'),
    ];
    for (const [where, texts] of places) {
      assert.ok(texts.length > 0, `${where} were captured`);
      for (const text of texts) {
        for (const form of decoded(text)) {
          for (const secret of SECRETS)
            assert.ok(!form.includes(secret), `${where} contain a secret: ${text.slice(0, 300)}`);
        }
      }
    }
  });
});
