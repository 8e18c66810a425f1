/** The method hooks by method name (method-hook.ts), made once per origin forwarder. */
import { LogsSplitHook } from './eth-get-logs.js';
import { SendHook } from './eth-send-raw-transaction.js';
import type { HookUpstream, MethodHook } from './method-hook.js';

/** The send hook holds the resend memory: one set of hooks per forwarder. */
export function methodHooks(upstream: HookUpstream): ReadonlyMap<string, MethodHook> {
  return new Map<string, MethodHook>([
    ['eth_getLogs', new LogsSplitHook(upstream)],
    ['eth_sendRawTransaction', new SendHook(upstream)],
  ]);
}
