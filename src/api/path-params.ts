/**
 * Path parameters as route handlers use them. The account is already checked against the caller's
 * token (auth.ts) before a handler runs. An object id that does not have the resource's id shape cannot
 * name anything: it is a 404 / 7003 at once — no lookup, and the odd value is not echoed back.
 */
import { SwitchyardError } from '../errors/base.js';

type Params = Readonly<Record<string, string>>;

export function accountParam(params: Params): string {
  return params.account_id as string;
}

/** `params[name]` when it matches `shape`; otherwise a 404 naming the kind of object (`label`). */
export function objectIdParam(params: Params, name: string, label: string, shape: RegExp): string {
  const id = params[name] as string;
  if (!shape.test(id)) throw new SwitchyardError('API_NOT_FOUND', `${label} not found: the id has the wrong shape`);
  return id;
}

/** The 404 for a well-formed id that names nothing in the caller's account. */
export function objectNotFound(label: string, id: string): SwitchyardError {
  return new SwitchyardError('API_NOT_FOUND', `${label} ${id} not found`);
}

/**
 * The path's account when it is the routing account (config `account_id`), which alone has what goes
 * through the gateway (keys, transactions); any other account is 403, whatever the rest of the path.
 */
export function routingAccountParam(params: Params, routingAccountId: string, refusal: string): string {
  const id = accountParam(params);
  if (id !== routingAccountId) throw new SwitchyardError('API_FORBIDDEN', refusal);
  return id;
}
