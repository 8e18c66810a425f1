/**
 * Chain-incident alerts end to end (SPEC §14): `switchyard serve` (the CLI as a child) in front of two
 * real anvil nodes (pool `pair`, origins a and b, mining only when the test says), a real webhook receiver
 * and a real SMTP server, with policies made through the official SDK. In order:
 * 1. `available_alerts` (SDK) lists the chain-incident types under "Switchyard"; an unknown network filter is 400.
 * 2. Head stall: a mines (a pacer, every 400 ms, from before `serve` starts), then stops at height H →
 *    START at H; the receiver answers 500, `serve` is restarted, and the same webhook-id arrives again
 *    and is taken; a mines two blocks → END at H + 2 with the same correlation id.
 * 3. Reorg: `anvil_reorg` of depth 3 on a (min depth 2) → one reorg alert with depth 3 from block H. b
 *    never mines along, so no other origin can back a's new branch: a is the operator's trusted origin
 *    (`verify_anchor.origins`, SPEC §20), whose word moves the chain.
 * 4. Divergence: b is mined onto another chain at the same heights → START naming a and b and a height
 *    at or below head − finality_depth, with each origin's real hash there. a keeps mining to the end.
 * 5. b is disabled through the SDK: one healthy origin is left, nothing diverges → END with the
 *    divergence's correlation id.
 * At the end: every alert reached the receiver (answered 2xx) exactly once per webhook-id, one email
 * each, and history lists them.
 * Thresholds are small in config (head_stall_after 2 s, head polls every 100 ms, finality_depth 2):
 * the scenario spans two processes, so no clock can be injected. The chain rests only where a stall is
 * wanted; where the scenario itself waits with the chain at rest (the restart, the reorg's setup) a
 * loaded machine can take over 2 s, and the head stall that then really begins is another incident:
 * the four above are picked out by correlation id, and any other alert must be such a head stall, itself
 * taken once and mailed once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Cloudflare from 'cloudflare';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { type CliProcess, runCli, spawnCli } from '../helpers/cli.js';
import { type Receiver, type SmtpSink, startReceiver, startSmtp, waitFor } from '../notifications/helpers.js';
import { describeRun, height, type Pacer, rpc, startPacer } from './helpers.js';

const ACCOUNT = 'c4a1e000000000000000000000000c4a';
const MAIL = 'ops@example.com';

interface Alert {
  id: string;
  status: number;
  body: {
    alert_type: string;
    alert_event: string;
    alert_correlation_id: string;
    data: Record<string, unknown>;
    text: string;
  };
}

const SUBJECTS: Record<string, string> = {
  'switchyard_head_stall_alert ALERT_STATE_EVENT_START': '[Switchyard] Head stall on sepolia',
  'switchyard_head_stall_alert ALERT_STATE_EVENT_END': '[Switchyard] Head stall on sepolia resolved',
  'switchyard_reorg_alert ALERT_STATE_EVENT_START': '[Switchyard] Reorg of depth 3 on sepolia',
  'switchyard_origin_divergence_alert ALERT_STATE_EVENT_START': '[Switchyard] Origin divergence on sepolia',
  'switchyard_origin_divergence_alert ALERT_STATE_EVENT_END': '[Switchyard] Origin divergence on sepolia resolved',
};

test('chain incidents: head stall, reorg and divergence alerts by webhook and email, across a restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-incidents-'));
  const a = await startTestAnvil({ noMining: true });
  const b = await startTestAnvil({ noMining: true });
  const receiver: Receiver = await startReceiver();
  const smtp: SmtpSink = await startSmtp();
  const children: CliProcess[] = [];
  // The chain moves until the scenario wants it to rest (see the header).
  let pacer: Pacer | undefined = startPacer([a]);
  try {
    const configFile = join(dir, 'switchyard.yaml');
    writeFileSync(
      configFile,
      [
        `data_dir: ${JSON.stringify(join(dir, 'data'))}`,
        `account_id: ${ACCOUNT}`,
        `smtp_url: ${JSON.stringify(smtp.url)}`,
        'gateway: { listen: "127.0.0.1:0" }',
        'api: { listen: "127.0.0.1:0" }',
        'log_level: info',
        'networks:',
        '  sepolia:',
        '    chain_id: 11155111',
        '    pools: [pair]',
        '    head_poll_interval: 0.1',
        '    finality_depth: 2',
        '    incidents: { head_stall_after: 2, reorg_min_depth: 2 }',
        '    verify_anchor: { origins: [pair/a] }',
        '  goerli: { chain_id: 5, pools: [], retired_on: "2024-04-01" }',
        'pools:',
        '  - name: pair',
        '    origins:',
        `      - { name: a, address: ${JSON.stringify(a.url)} }`,
        `      - { name: b, address: ${JSON.stringify(b.url)} }`,
        '',
      ].join('\n'),
    );
    const serve = async (): Promise<{ child: CliProcess; api: string }> => {
      const child = spawnCli(['serve', '--config', configFile]);
      children.push(child);
      const started = await child.waitForLog((line) => line.msg === 'switchyard started', 60_000);
      return { child, api: String(started.api) };
    };
    let current = await serve();
    const made = await runCli(['token', 'create', '--account', ACCOUNT, '--config', configFile]);
    assert.equal(made.code, 0, made.stderr);
    const token = made.stdout.trim();
    const sdk = (api: string) => new Cloudflare({ apiToken: token, baseURL: api, maxRetries: 0 });
    let client = sdk(current.api);

    // ── 1. What policies can ask for.
    const available = await client.alerting.availableAlerts.list({ account_id: ACCOUNT });
    assert.deepEqual(
      (available.Switchyard ?? []).map((item) => item.type).filter((type) => type !== 'switchyard_transaction_alert'),
      [
        'switchyard_head_stall_alert',
        'switchyard_origin_divergence_alert',
        'switchyard_reorg_alert',
        'switchyard_finality_stall_alert',
        'switchyard_origin_integrity_alert',
      ],
    );
    assert.deepEqual(
      (available['Load Balancing'] ?? []).map((item) => item.type),
      ['load_balancing_health_alert'],
    );
    const networkOption = (available.Switchyard?.[0]?.filter_options ?? []).find(
      (option) => (option as { Key: string }).Key === 'network',
    ) as { AvailableValues: { ID: string }[] };
    assert.deepEqual(
      networkOption.AvailableValues.map((value) => value.ID),
      ['sepolia'],
      'configured networks, retired ones left out',
    );

    const pools = await client.loadBalancers.pools.list({ account_id: ACCOUNT });
    const pool = pools.result.find((candidate) => candidate.name === 'pair');
    assert.ok(pool?.id);
    const destination = await client.alerting.destinations.webhooks.create({
      account_id: ACCOUNT,
      name: 'pager',
      url: receiver.url,
      secret: 'incident-secret',
    });
    await assert.rejects(
      client.alerting.policies.create({
        account_id: ACCOUNT,
        name: 'bad',
        alert_type: 'switchyard_reorg_alert' as never,
        enabled: true,
        mechanisms: { email: [{ id: MAIL }] },
        filters: { network: ['goerli'] } as never,
      }),
      (err: Error & { status?: number }) => err.status === 400 && /goerli/.test(err.message),
      'a retired network is refused',
    );
    for (const type of [
      'switchyard_head_stall_alert',
      'switchyard_reorg_alert',
      'switchyard_origin_divergence_alert',
    ]) {
      await client.alerting.policies.create({
        account_id: ACCOUNT,
        name: type,
        alert_type: type as never,
        enabled: true,
        mechanisms: { email: [{ id: MAIL }], webhooks: [{ id: destination.id as string }] },
        filters: { network: ['sepolia'], pool_id: [pool.id] } as never,
      });
    }
    receiver.requests.length = 0; // the destination's test message

    // The receiver answers 500 until `refused` is set (after the first serve stopped), then 200 — from
    // here, so an alert of another stall during the setup is retried and taken like the others.
    receiver.status = 500;
    let refused = Number.POSITIVE_INFINITY;
    const alerts = (): Alert[] =>
      receiver.requests.map((request, i) => ({
        id: String(request.headers['webhook-id']),
        status: i < refused ? 500 : 200,
        body: JSON.parse(request.body) as Alert['body'],
      }));
    const find = (type: string, event: string) =>
      alerts().filter((alert) => alert.body.alert_type === type && alert.body.alert_event === event);

    // ── 2. Head stall at H, with a restart while its START is undelivered.
    await pacer.stop();
    pacer = undefined;
    const rest = await height(a);
    assert.ok(rest >= 1, 'the pacer mined');
    const first = await waitFor(
      () =>
        find('switchyard_head_stall_alert', 'ALERT_STATE_EVENT_START').find((x) => x.body.data.block_number === rest),
      `the head stall START at ${rest} (answered 500)`,
      30_000,
    );
    assert.equal(first.body.data.network, 'sepolia');
    assert.deepEqual(first.body.data.pool_ids, [pool.id]);
    current.child.kill('SIGTERM');
    assert.equal((await current.child.waitForExit(30_000)).code, 0);
    refused = receiver.requests.length;
    receiver.status = 200;
    current = await serve();
    client = sdk(current.api);
    const stallId = first.body.alert_correlation_id;
    const ofStall = (event: string) =>
      find('switchyard_head_stall_alert', event).filter((x) => x.body.alert_correlation_id === stallId);
    await waitFor(() => ofStall('ALERT_STATE_EVENT_START').length >= 2, 'the START again after the restart', 30_000);
    assert.deepEqual(
      new Set(ofStall('ALERT_STATE_EVENT_START').map((x) => x.id)),
      new Set([first.id]),
      'the same webhook-id: one message, delivered at least once',
    );
    await rpc(a, 'evm_mine');
    await rpc(a, 'evm_mine');
    const end = await waitFor(() => ofStall('ALERT_STATE_EVENT_END')[0], 'the head stall END', 30_000);
    assert.equal(end.body.data.block_number, rest + 2);

    // ── 3. A reorg deeper than reorg_min_depth: blocks rest … rest + 2 replaced.
    await rpc(a, 'anvil_reorg', [3, []]);
    const reorg = await waitFor(
      () => find('switchyard_reorg_alert', 'ALERT_STATE_EVENT_START')[0],
      'the reorg alert',
      30_000,
    );
    assert.equal(reorg.body.data.depth, 3);
    assert.equal(reorg.body.data.block_number, rest);

    // ── 4. b onto another chain at the same heights (its own blocks, later timestamps), both mining on.
    const top = await height(a);
    await rpc(b, 'evm_setNextBlockTimestamp', [2_000_000_000]);
    await rpc(b, 'anvil_mine', [`0x${top.toString(16)}`]);
    // Both nodes produce a block every 400 ms (four head polls): the chain's pace, not a wait.
    pacer = startPacer([a, b]);
    const divergence = await waitFor(
      () => find('switchyard_origin_divergence_alert', 'ALERT_STATE_EVENT_START')[0],
      'the divergence START',
      30_000,
    );
    // From here only a mines: the head moves on (no stall) and a, ahead, stays the leader.
    await pacer.stop();
    pacer = startPacer([a]);
    const data = divergence.body.data as { origins: string[]; block_number: number; hashes: Record<string, string> };
    assert.deepEqual(data.origins, ['a', 'b']);
    assert.ok(data.block_number > 0);
    const hashAt = async (node: AnvilNode) =>
      (await rpc<{ hash: string }>(node, 'eth_getBlockByNumber', [`0x${data.block_number.toString(16)}`, false])).hash;
    assert.deepEqual(data.hashes, { a: await hashAt(a), b: await hashAt(b) });
    assert.notEqual(data.hashes.a, data.hashes.b);

    // ── 5. The odd origin disabled: the divergence ends, under the same correlation id.
    const stored = await client.loadBalancers.pools.get(pool.id, { account_id: ACCOUNT });
    await client.loadBalancers.pools.edit(pool.id, {
      account_id: ACCOUNT,
      origins: (stored.origins ?? []).map((origin) => ({ ...origin, enabled: origin.name !== 'b' })) as never,
    });
    const divergenceEnd = await waitFor(
      () => find('switchyard_origin_divergence_alert', 'ALERT_STATE_EVENT_END')[0],
      'the divergence END',
      30_000,
    );
    assert.equal(divergenceEnd.body.alert_correlation_id, divergence.body.alert_correlation_id);
    assert.equal(divergenceEnd.body.data.network, 'sepolia');

    // ── Each alert once: by webhook (taken with 2xx once per webhook-id) and by email.
    const expected = [
      'switchyard_head_stall_alert ALERT_STATE_EVENT_START',
      'switchyard_head_stall_alert ALERT_STATE_EVENT_END',
      'switchyard_reorg_alert ALERT_STATE_EVENT_START',
      'switchyard_origin_divergence_alert ALERT_STATE_EVENT_START',
      'switchyard_origin_divergence_alert ALERT_STATE_EVENT_END',
    ];
    const ours = new Set([stallId, reorg.body.alert_correlation_id, divergence.body.alert_correlation_id]);
    const label = (alert: Alert) => `${alert.body.alert_type} ${alert.body.alert_event}`;
    // Settled: every webhook-id sent was taken once (a 500 is retried), and mailed once.
    await waitFor(
      () => {
        const taken = alerts().filter((alert) => alert.status === 200);
        const sent = alerts();
        return sent.every((alert) => taken.some((x) => x.id === alert.id)) && smtp.messages.length >= taken.length;
      },
      'every alert taken and mailed',
      30_000,
    );
    const taken = alerts().filter((alert) => alert.status === 200);
    assert.deepEqual(taken.filter((alert) => ours.has(alert.body.alert_correlation_id)).map(label), expected);
    const others = taken.filter((alert) => !ours.has(alert.body.alert_correlation_id));
    for (const other of others) {
      assert.equal(other.body.alert_type, 'switchyard_head_stall_alert', 'another incident can only be a head stall');
      t.diagnostic(
        `another head stall (the chain rested over 2 s): ${label(other)} at ${other.body.data.block_number}`,
      );
    }
    assert.equal(new Set(taken.map((alert) => alert.id)).size, taken.length, 'no webhook-id taken twice');
    assert.equal(
      new Set(taken.map((alert) => `${alert.body.alert_correlation_id} ${alert.body.alert_event}`)).size,
      taken.length,
      'each START and END once',
    );
    for (const alert of alerts()) {
      assert.ok(alert.id.startsWith('msg_'));
      const request = receiver.requests.find((r) => r.headers['webhook-id'] === alert.id);
      assert.match(String(request?.headers['webhook-signature']), /^v1,/);
      assert.equal(request?.headers['cf-webhook-auth'], 'incident-secret');
    }
    const subjects = smtp.messages.map((mail) => /^Subject: (.*)$/m.exec(mail.raw)?.[1] ?? '');
    assert.deepEqual(subjects.sort(), taken.map((alert) => SUBJECTS[label(alert)]).sort(), 'one email per alert');
    assert.ok(smtp.messages.every((mail) => mail.to.includes(MAIL)));
    const divergenceMail =
      smtp.messages.find((mail) => /^Subject: \[Switchyard\] Origin divergence on sepolia$/m.test(mail.raw))?.raw ?? '';
    assert.ok(divergenceMail.includes(`a: ${data.hashes.a}`) && divergenceMail.includes(`b: ${data.hashes.b}`));
    assert.match(divergenceMail, new RegExp(`Block: +${data.block_number}`));

    const history = await client.alerting.history.list({ account_id: ACCOUNT, per_page: 100 } as never);
    const types = history.result.map((entry) => `${entry.alert_type} ${entry.mechanism_type}`).sort();
    assert.deepEqual(
      types,
      [
        ...taken.map((alert) => `${alert.body.alert_type} email`),
        ...taken.map((alert) => `${alert.body.alert_type} webhook`),
      ].sort(),
    );
    for (const child of children) assert.ok(!child.stderr().includes('incident-secret'), 'no secret in logs');
  } catch (err) {
    console.error(describeRun(children, receiver));
    throw err;
  } finally {
    await pacer?.stop();
    for (const child of children) child.kill('SIGTERM');
    for (const child of children) await child.waitForExit(30_000).catch(() => child.kill('SIGKILL'));
    await receiver.close();
    await smtp.close();
    await a.stop();
    await b.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
