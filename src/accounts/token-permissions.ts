/**
 * The permission model of API tokens, in Cloudflare's account-token terms. There are exactly two
 * permission groups, with fixed ids that never change (clients and scripts hard-code them):
 *
 *   Switchyard Read   0e4a1dff8b6ac4534dcb286eb8df7c78   every GET of the account's API
 *   Switchyard Write  b688b1f8d4ebf2e4198be92100a4496a   everything, incl. managing the account's tokens
 *
 * A token's access is `write` when any of its policies lists the Write group, else `read`; the
 * `api_tokens.read_only` column holds that outcome and is what authentication reads. A policy is always
 * `effect: "allow"` on exactly one resource, `com.cloudflare.api.account.<account_id>: "*"` — the
 * token's own account. The policies as given are kept (JSON in `api_tokens.policies`) so that a token
 * fetched with GET can be sent back with PUT unchanged.
 */
export const READ_GROUP_ID = '0e4a1dff8b6ac4534dcb286eb8df7c78';
export const WRITE_GROUP_ID = 'b688b1f8d4ebf2e4198be92100a4496a';

export interface PermissionGroup {
  id: string;
  name: string;
  /** Cloudflare's listing fields: where the group applies and whether a user may pick it. */
  scopes: ['com.cloudflare.api.account'];
  is_selectable: true;
}

export const PERMISSION_GROUPS: readonly PermissionGroup[] = [
  { id: READ_GROUP_ID, name: 'Switchyard Read', scopes: ['com.cloudflare.api.account'], is_selectable: true },
  { id: WRITE_GROUP_ID, name: 'Switchyard Write', scopes: ['com.cloudflare.api.account'], is_selectable: true },
];

/** A policy as stored and returned. */
export interface TokenPolicy {
  id: string;
  effect: 'allow';
  permission_groups: { id: string; name: string }[];
  resources: Record<string, '*'>;
}

/** The one resource key a policy of this account's tokens may name. */
export function accountResource(accountId: string): string {
  return `com.cloudflare.api.account.${accountId}`;
}

export function permissionGroup(id: string): PermissionGroup | undefined {
  return PERMISSION_GROUPS.find((group) => group.id === id);
}

/** True when the policies grant write access (any policy lists the Write group). */
export function grantsWrite(policies: readonly TokenPolicy[]): boolean {
  return policies.some((policy) => policy.permission_groups.some((group) => group.id === WRITE_GROUP_ID));
}

/** The single policy of a token made by `switchyard token create` (and of tokens older than policies). */
export function defaultPolicies(policyId: string, accountId: string, readOnly: boolean): TokenPolicy[] {
  const group = permissionGroup(readOnly ? READ_GROUP_ID : WRITE_GROUP_ID) as PermissionGroup;
  return [
    {
      id: policyId,
      effect: 'allow',
      permission_groups: [{ id: group.id, name: group.name }],
      resources: { [accountResource(accountId)]: '*' },
    },
  ];
}
