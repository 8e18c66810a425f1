/**
 * Row type of `secrets_key` (migration 010): the key the store's secrets are sealed with
 * (store/store-secrets.ts). One row, id `current`. Conventions as in core.ts.
 */
export interface SecretsKeyTable {
  id: string; // always "current"
  key_id: string; // 16 hex: store/secret-box.ts keyIdOf
  check_value: string; // a known text sealed with the key: proves a key is the store's
  modified_on: string; // RFC 3339: when the key was recorded or rotated
}

export interface SecretsTables {
  secrets_key: SecretsKeyTable;
}
