/**
 * The vocabulary of chain incidents (SPEC §14, and §18's origin integrity): the alert types, what an alert's `data` holds, and
 * whom an incident concerns. `incidents/` detects and records; `notifications/` turns records into
 * deliveries.
 */
import type { IncidentKind } from '../store/tables/incidents.js';

export type { IncidentKind };

/** alert_type of each kind (the names are fixed by SPEC §14). */
export const INCIDENT_ALERT_TYPES: Readonly<Record<IncidentKind, string>> = {
  head_stall: 'switchyard_head_stall_alert',
  origin_divergence: 'switchyard_origin_divergence_alert',
  reorg: 'switchyard_reorg_alert',
  finality_stall: 'switchyard_finality_stall_alert',
  origin_integrity: 'switchyard_origin_integrity_alert',
};

/** The alert's `data` (fields that do not apply are omitted). `origins`/`hashes`/`pool_ids` are per account. */
export interface IncidentData {
  network: string;
  kind: IncidentKind;
  origins?: string[];
  pool_ids?: string[];
  /** Divergence: the compared height; reorg: the fork point; stalls: the last head / finalized block. */
  block_number?: number;
  /** origin name → block hash at `block_number` (divergence). */
  hashes?: Record<string, string>;
  /** Reorg: blocks replaced. */
  depth?: number;
  /** Integrity: the method whose answer failed verification, what check failed and how. */
  method?: string;
  check?: string;
  reason?: string;
  /** Integrity: the block the answer was checked at, when the client named it by hash. */
  block_hash?: string;
  /** RFC 3339: when the condition began (stalls: the last advance; divergence and reorg: when seen). */
  since?: string;
}

/** One pool (and, where it applies, one origin) an incident involves. */
export interface ScopeEntry {
  account_id: string;
  pool_id: string;
  /** The origin named by the incident (divergence), if any. */
  origin?: string;
}

/** Every pool of the network at detection time, with the origins the incident names. */
export type IncidentScope = ScopeEntry[];

export interface IncidentRecord {
  id: string;
  network: string;
  kind: IncidentKind;
  status: 'open' | 'closed';
  data: IncidentData;
  scope: IncidentScope;
  end_data: IncidentData | undefined;
  opened_at: string;
  closed_at: string | undefined;
  start_dispatched: boolean;
  end_dispatched: boolean;
}
