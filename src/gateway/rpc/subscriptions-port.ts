/**
 * The port between the WebSocket transport (ws/) and the subscription hub (subscriptions/hub.ts), as
 * `Forwarder` is between the handler and upstream/: both sides import these types from rpc/, neither
 * imports the other.
 */

/** Where one subscription's notifications go (the WebSocket transport implements it per subscription). */
export interface SubscriptionSink {
  /** The full JSON text of one eth_subscription notification. */
  send(notification: string): void;
}

/** eth_subscribe / eth_unsubscribe as the transport calls them. */
export interface Subscriptions {
  /**
   * eth_subscribe params → the gateway's own subscription id, or a promise of it when the subscription
   * must learn where it starts first (logs; the promise never rejects); throws a SwitchyardError (-32602,
   * -32005). The sink may be called before the id is known.
   */
  subscribe(network: string, params: unknown, sink: SubscriptionSink): string | Promise<string>;
  /** Ends a subscription: true when the id was live. */
  unsubscribe(id: string): boolean;
}
