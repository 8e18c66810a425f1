/**
 * Webhook destinations by name wherever the API names them by id (policies' mechanisms, the delivery
 * queue, history): the account's destinations are read every 15 s (`GET …/destinations/webhooks`); an id
 * no destination has any more reads "deleted webhook" with the start of its id.
 */
import { usePoll } from './hooks.js';
import type { Destination } from './types.js';
import type { ViewProps } from './view.js';

export const DESTINATIONS_REFRESH_MS = 15_000;

export function useDestinations({ client, onSessionEnded }: Pick<ViewProps, 'client' | 'onSessionEnded'>) {
  return usePoll(
    () => client.get<Destination[]>('/accounts/{account}/alerting/v3/destinations/webhooks'),
    onSessionEnded,
    DESTINATIONS_REFRESH_MS,
  );
}

/** "webhook <name>" for a destination id, "<address>" for email: how a mechanism reads in the console. */
export type MechanismLabel = (type: string, mechanism: string) => string;

export function labelMechanism(destinations: readonly Destination[] | undefined): MechanismLabel {
  return (type, mechanism) => {
    if (type !== 'webhook') return mechanism;
    if (destinations === undefined) return 'webhook …';
    const found = destinations.find((d) => d.id === mechanism);
    return found === undefined ? `deleted webhook ${mechanism.slice(0, 8)}…` : `webhook ${found.name}`;
  };
}

export function useMechanismLabel(props: Pick<ViewProps, 'client' | 'onSessionEnded'>): MechanismLabel {
  return labelMechanism(useDestinations(props).data);
}
