import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SwitchyardError } from '../../errors/base.js';
import { parseBody, type RpcCall } from '../rpc/request.js';
import type { SubscriptionSink, Subscriptions } from '../rpc/subscriptions-port.js';
import { WsMetrics } from './metrics.js';
import { ConnectionSubscriptions } from './subscriptions.js';

/** newHeads answered at once; logs answered when the test calls `release` (as the hub does once it knows the start). */
class Hub implements Subscriptions {
  readonly sinks = new Map<string, SubscriptionSink>();
  release: () => void = () => {};
  #next = 0;
  subscribe(_network: string, params: unknown, sink: SubscriptionSink): string | Promise<string> {
    const kind = Array.isArray(params) ? params[0] : undefined;
    if (kind !== 'newHeads' && kind !== 'logs') throw new SwitchyardError('RPC_INVALID_PARAMS', 'bad');
    this.#next += 1;
    const id = `0x${this.#next}`;
    this.sinks.set(id, sink);
    if (kind === 'newHeads') return id;
    return new Promise((resolve) => {
      this.release = () => resolve(id);
    });
  }
  unsubscribe(id: string): boolean {
    return this.sinks.delete(id);
  }
}

function call(method: string, params: unknown[], id?: number): RpcCall {
  const body = JSON.stringify({ jsonrpc: '2.0', method, params, ...(id === undefined ? {} : { id }) });
  const parsed = parseBody(Buffer.from(body), 10);
  assert.ok(!parsed.batch && parsed.element.ok);
  return parsed.element.call;
}

function setup(limit = 2) {
  const hub = new Hub();
  const out: string[] = [];
  /** Notifications that may still be paid for (Infinity: all). */
  const budget = { left: Number.POSITIVE_INFINITY, charged: 0 };
  const charge = () => {
    if (budget.left <= 0) throw new SwitchyardError('KEY_QUOTA_EXCEEDED', 'quota used up');
    budget.left -= 1;
    budget.charged += 1;
  };
  const subs = new ConnectionSubscriptions(
    hub,
    { send: (text) => out.push(text), charge },
    limit,
    new WsMetrics(undefined),
  );
  const subscribe = (id = 1) =>
    JSON.parse((subs.answer('sepolia', call('eth_subscribe', ['newHeads'], id)) as Buffer).toString());
  return { hub, out, subs, subscribe, budget };
}

describe('ConnectionSubscriptions', () => {
  it('answers the hub id; refuses one over the limit with WS_SUBSCRIPTION_LIMIT', () => {
    const { subs, subscribe } = setup(2);
    assert.equal(subscribe(), '0x1');
    assert.equal(subscribe(), '0x2');
    assert.throws(
      () => subscribe(),
      (err: SwitchyardError) => err.code === 'WS_SUBSCRIPTION_LIMIT',
    );
    assert.equal(subs.size, 2);
  });

  it("eth_unsubscribe: true for the connection's own id, false for any other", () => {
    const { subs, hub, subscribe } = setup();
    const id = subscribe();
    hub.subscribe('sepolia', ['newHeads'], { send: () => {} }); // another connection's, 0x2
    const unsubscribe = (sid: string) =>
      (subs.answer('sepolia', call('eth_unsubscribe', [sid], 9)) as Buffer).toString();
    assert.equal(unsubscribe('0x2'), 'false');
    assert.equal(unsubscribe(id), 'true');
    assert.equal(unsubscribe(id), 'false');
    assert.ok(hub.sinks.has('0x2'), "another connection's subscription is untouched");
  });

  it('holds notifications until the answer carrying the id went out; close() ends every subscription', () => {
    const { subs, hub, out, subscribe } = setup();
    const id = subscribe() as string;
    hub.sinks.get(id)?.send('first');
    assert.deepEqual(out, []);
    subs.announced(Buffer.from(`{"jsonrpc":"2.0","id":1,"result":"${id}"}`));
    hub.sinks.get(id)?.send('second');
    assert.deepEqual(out, ['first', 'second']);
    subs.close();
    assert.equal(hub.sinks.size, 0);
    assert.equal(subs.size, 0);
  });

  it('an eth_subscribe notification (no id) holds nothing back', () => {
    const { subs, hub, out } = setup();
    subs.answer('sepolia', call('eth_subscribe', ['newHeads']));
    hub.sinks.get('0x1')?.send('note');
    assert.deepEqual(out, ['note']);
  });

  it('a subscription answered later counts toward the limit meanwhile; what came before its id is held', async () => {
    const { subs, hub, out } = setup(2);
    const later = subs.answer('sepolia', call('eth_subscribe', ['logs'], 1));
    assert.ok(later instanceof Promise);
    hub.sinks.get('0x1')?.send('early');
    const release = hub.release;
    assert.ok(subs.answer('sepolia', call('eth_subscribe', ['newHeads'], 2)) instanceof Buffer);
    assert.throws(
      () => subs.answer('sepolia', call('eth_subscribe', ['newHeads'], 3)),
      (err: SwitchyardError) => err.code === 'WS_SUBSCRIPTION_LIMIT',
    );
    release();
    assert.equal((await later).toString(), '"0x1"');
    assert.deepEqual(out, []);
    subs.announced(Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1"}'));
    assert.deepEqual(out, ['early']);
  });

  it('each notification sent is charged; a refused charge ends every subscription with an error notification', () => {
    const { subs, hub, out, subscribe, budget } = setup(3);
    const a = subscribe(1) as string;
    const b = subscribe(2) as string;
    subs.announced(Buffer.from(`[{"id":1,"result":"${a}"},{"id":2,"result":"${b}"}]`));
    budget.left = 2;
    hub.sinks.get(a)?.send('a1');
    hub.sinks.get(b)?.send('b1');
    assert.equal(budget.charged, 2);
    hub.sinks.get(a)?.send('a2');
    const last = (id: string) =>
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'eth_subscription',
        params: { subscription: id, error: { code: -32005, message: 'quota used up' } },
      });
    assert.deepEqual(out, ['a1', 'b1', last(a), last(b)]);
    assert.equal(subs.size, 0);
    assert.equal(hub.sinks.size, 0, 'the hub dropped both');
    hub.sinks.get(b)?.send('b2');
    assert.equal(out.length, 4, 'nothing after the last notification');
    const unsubscribe = (sid: string) =>
      (subs.answer('sepolia', call('eth_unsubscribe', [sid], 9)) as Buffer).toString();
    assert.equal(unsubscribe(a), 'false', 'the subscription is gone');
  });

  it('a charge waiting for a shared reserve sends at once; its later refusal ends the subscriptions', async () => {
    const hub = new Hub();
    const out: string[] = [];
    let refuse: (err: unknown) => void = () => {};
    const subs = new ConnectionSubscriptions(
      hub,
      {
        send: (text) => out.push(text),
        charge: () =>
          new Promise<void>((_resolve, reject) => {
            refuse = reject;
          }),
      },
      2,
      new WsMetrics(undefined),
    );
    const a = JSON.parse((subs.answer('sepolia', call('eth_subscribe', ['newHeads'], 1)) as Buffer).toString());
    subs.announced(Buffer.from(`{"id":1,"result":"${a}"}`));
    hub.sinks.get(a)?.send('a1');
    assert.deepEqual(out, ['a1'], 'not held back while the reserve is in flight');
    refuse(new SwitchyardError('KEY_QUOTA_EXCEEDED', 'quota used up'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(out.length, 2);
    assert.equal(JSON.parse(out[1] ?? '').params.error.code, -32005);
    assert.equal(subs.size, 0, 'the refusal ended the subscription');
  });

  it('a subscription still waiting for its id when the charge is refused gets only its error, after its id', async () => {
    const { subs, hub, out, subscribe, budget } = setup(3);
    const a = subscribe(1) as string;
    subs.announced(Buffer.from(`{"id":1,"result":"${a}"}`));
    const later = subs.answer('sepolia', call('eth_subscribe', ['logs'], 2)) as Promise<Buffer>;
    hub.sinks.get('0x2')?.send('held');
    budget.left = 0;
    hub.sinks.get(a)?.send('a1');
    hub.release();
    const id = JSON.parse((await later).toString()) as string;
    assert.equal(hub.sinks.has(id), false, 'ended at the hub as soon as its id was known');
    subs.announced(Buffer.from(`{"id":2,"result":"${id}"}`));
    assert.deepEqual(
      out.map((text) => JSON.parse(text).params.subscription),
      [a, id],
    );
    assert.ok(out.every((text) => JSON.parse(text).params.error.code === -32005));
  });
});
