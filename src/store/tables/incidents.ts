/**
 * Row type of the chain-incident table (SPEC §14). Owned by `src/incidents/`; the notification dispatcher
 * reads and marks it. Conventions as in core.ts: ids text, timestamps RFC 3339 UTC text, JSON as text.
 *
 * One row per incident. A condition (head stall, divergence, finality stall) is open while `open_key`
 * holds `<network>:<kind>`; that column is unique, so with several processes on one store only one can
 * open an incident of a kind per network at a time, and only one can close it (compare-and-set on
 * `status`). A reorg is a one-off: its row is written closed, with an id derived from the reorg itself,
 * so two processes that saw the same reorg write one row. The id is the alerts' correlation id.
 * An origin's integrity incident (SPEC §18) is one per origin: its `open_key` is
 * `<network>:origin_integrity:<pool id>/<origin name>`.
 */
export type IncidentKind = 'head_stall' | 'origin_divergence' | 'reorg' | 'finality_stall' | 'origin_integrity';

export interface ChainIncidentsTable {
  id: string; // uuid; alert_correlation_id of its START and END
  network: string;
  kind: IncidentKind;
  status: 'open' | 'closed';
  /** `<network>:<kind>` while open, null once closed (unique: one open incident per network and kind). */
  open_key: string | null;
  /** JSON: the alert's `data` at START (incidents/types.ts IncidentData). */
  data: string;
  /** JSON: the accounts, pools and origins the incident involves (incidents/types.ts IncidentScope). */
  scope: string;
  /** JSON: `data` at END; null while open and for one-offs. */
  end_data: string | null;
  opened_at: string;
  closed_at: string | null;
  /** 0 | 1: the START was turned into deliveries. */
  start_dispatched: number;
  /** 0 | 1: the END was turned into deliveries (one-offs: 1 from the start, they have no END). */
  end_dispatched: number;
}

export interface IncidentTables {
  chain_incidents: ChainIncidentsTable;
}
