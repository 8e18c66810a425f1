import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SwitchyardError } from '../../errors/base.js';
import { parseBody, type RpcCall } from '../rpc/request.js';
import type { SubscriptionSink, Subscriptions } from '../rpc/subscriptions-port.js';
import { WsMetrics } from './metrics.js';
import { ConnectionSubscriptions } from './subscriptions.js';

class Hub implements Subscriptions {
  readonly sinks = new Map<string, SubscriptionSink>();
  #next = 0;
  subscribe(_network: string, params: unknown, sink: SubscriptionSink): string {
    if (!Array.isArray(params) || params[0] !== 'newHeads') throw new SwitchyardError('RPC_INVALID_PARAMS', 'bad');
    this.#next += 1;
    const id = `0x${this.#next}`;
    this.sinks.set(id, sink);
    return id;
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
  const subs = new ConnectionSubscriptions(hub, { send: (text) => out.push(text) }, limit, new WsMetrics(undefined));
  const subscribe = (id = 1) => JSON.parse(subs.answer('sepolia', call('eth_subscribe', ['newHeads'], id)).toString());
  return { hub, out, subs, subscribe };
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
    const unsubscribe = (sid: string) => subs.answer('sepolia', call('eth_unsubscribe', [sid], 9)).toString();
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
});
