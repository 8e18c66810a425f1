/**
 * The alert types policies accept and `GET …/alerting/v3/available_alerts` lists (Cloudflare's shape:
 * category → [{type, display_name, description, filter_options}]), with the filters each type takes.
 * The health alert is Cloudflare's own; the chain-incident types (SPEC §14, docs/incidents.md) and the
 * transaction alert (SPEC §19, docs/ledger.md) are ours, under "Switchyard".
 */
import type { Config } from '../config/schema.js';
import { INCIDENT_ALERT_TYPES } from '../incidents/types.js';
import { ALERT_STATUSES, TRANSACTION_ALERT_TYPE } from '../ledger/types.js';
import { HEALTH_ALERT_TYPE } from './matching.js';

export interface AlertTypeInfo {
  readonly type: string;
  readonly category: string;
  readonly display_name: string;
  readonly description: string;
  /** Filter keys the type accepts; values listed where they are a fixed set. */
  readonly filters: readonly string[];
  readonly filterValues?: Readonly<Record<string, readonly string[]>>;
}

const INCIDENT_FILTERS = ['network', 'pool_id'];

export const ALERT_TYPES: readonly AlertTypeInfo[] = [
  {
    type: HEALTH_ALERT_TYPE,
    category: 'Load Balancing',
    display_name: 'Load Balancing Health Alert',
    description: 'A pool or one of its origins changed health (Unhealthy or Healthy).',
    filters: ['pool_id', 'new_health', 'event_source'],
    filterValues: { new_health: ['Unhealthy', 'Healthy'], event_source: ['pool', 'origin'] },
  },
  {
    type: INCIDENT_ALERT_TYPES.head_stall,
    category: 'Switchyard',
    display_name: 'Chain head stall',
    description: "A network's head has not advanced for head_stall_after; ends when it advances again.",
    filters: INCIDENT_FILTERS,
  },
  {
    type: INCIDENT_ALERT_TYPES.origin_divergence,
    category: 'Switchyard',
    display_name: 'Origin divergence',
    description:
      'Two healthy origins report different hashes for the same block at least finality_depth below the head; ends when they agree again.',
    filters: INCIDENT_FILTERS,
  },
  {
    type: INCIDENT_ALERT_TYPES.reorg,
    category: 'Switchyard',
    display_name: 'Chain reorganisation',
    description: 'A reorg replaced at least reorg_min_depth blocks of a network (a one-off alert).',
    filters: INCIDENT_FILTERS,
  },
  {
    type: INCIDENT_ALERT_TYPES.finality_stall,
    category: 'Switchyard',
    display_name: 'Finality stall',
    description: "A network's finalized block has not advanced for finality_stall_after; ends when it advances again.",
    filters: INCIDENT_FILTERS,
  },
  {
    type: INCIDENT_ALERT_TYPES.origin_integrity,
    category: 'Switchyard',
    display_name: 'Origin integrity',
    description:
      "An origin's answer failed verification (networks.{name}.verify): names origin, method and block; ends after verify_anchor.clear_after without another failure.",
    filters: INCIDENT_FILTERS,
  },
  {
    type: TRANSACTION_ALERT_TYPE,
    category: 'Switchyard',
    display_name: 'Transaction status',
    description:
      'A transaction sent through the gateway was included, became final, was replaced, dropped or reorged out (one alert per change).',
    filters: ['network', 'key_id', 'status'],
    filterValues: { status: ALERT_STATUSES },
  },
];

export function alertTypeInfo(type: string): AlertTypeInfo | undefined {
  return ALERT_TYPES.find((info) => info.type === type);
}

/** Every alert type name, for error messages and listings. */
export const ALERT_TYPE_NAMES: readonly string[] = ALERT_TYPES.map((info) => info.type);

/** Networks the `network` filter accepts: configured, and not retired at `now` (retired_on not reached). */
export function liveNetworkNames(networks: Config['networks'], now: number): string[] {
  return Object.entries(networks)
    .filter(([, network]) => network.retired_on === undefined || Date.parse(`${network.retired_on}T00:00:00Z`) > now)
    .map(([name]) => name);
}
