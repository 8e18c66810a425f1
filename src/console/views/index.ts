/**
 * The console's views, in the order of the navigation: one file per view, each a component taking
 * `ViewProps` (view.ts). A new view is one file and one line here.
 */
import type { FunctionComponent } from 'preact';
import type { ViewProps } from '../view.js';
import { ChartsView } from './charts.js';
import { DeliveriesView } from './deliveries.js';
import { EventsView } from './events.js';
import { IncidentsView } from './incidents.js';
import { KeysView } from './keys.js';
import { MigrationView } from './migration.js';
import { OriginsView } from './origins.js';
import { PoliciesView } from './policies.js';
import { TransactionsView } from './transactions.js';

export interface ViewEntry {
  id: string;
  /** The navigation button's text. */
  label: string;
  component: FunctionComponent<ViewProps>;
}

export const VIEWS: readonly ViewEntry[] = [
  { id: 'origins', label: 'Origins', component: OriginsView },
  { id: 'incidents', label: 'Incidents', component: IncidentsView },
  { id: 'events', label: 'Events', component: EventsView },
  { id: 'transactions', label: 'Transactions', component: TransactionsView },
  { id: 'deliveries', label: 'Deliveries', component: DeliveriesView },
  { id: 'policies', label: 'Policies', component: PoliciesView },
  { id: 'keys', label: 'Keys', component: KeysView },
  { id: 'migration', label: 'Migration', component: MigrationView },
  { id: 'charts', label: 'Charts', component: ChartsView },
];
