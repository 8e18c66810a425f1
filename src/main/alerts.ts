/**
 * Start-up steps of the alerting side (main.ts calls them last): notifications and chain incidents. Each
 * builds its part from the config and outbound policy in `live` and puts it there, so the same step can
 * build a replacement from a new config (see live.ts); `live.stop()` stops whichever are current.
 */
import type { ChainTracker } from '../chain/tracker.js';
import { devnetOnDemandHeads } from '../devnet/idle-heads.js';
import { IncidentDetector } from '../incidents/detector.js';
import { NotificationService } from '../notifications/service.js';
import type { Store } from '../store/database.js';
import type { StoreSecrets } from '../store/store-secrets.js';
import type { LiveParts } from './live.js';
import type { StartUp } from './start-up.js';

/**
 * Notifications: health events and chain incidents → policies' webhooks and email, legacy per-pool email,
 * deprecation notices. Started after the API listener so emails name its real URL (`apiUrl`); stopped
 * before it (undelivered alerts stay queued in the store).
 */
export async function startNotifications(
  s: StartUp,
  store: Store,
  secrets: StoreSecrets,
  live: LiveParts,
  apiUrl: string,
): Promise<void> {
  const notifications = new NotificationService({
    store,
    secrets,
    config: live.config,
    clock: s.clock,
    logger: s.part('notifications'),
    apiBase: apiUrl,
    metrics: s.metrics,
    outbound: live.outbound,
  });
  await notifications.start();
  live.notifications = notifications;
}

/**
 * Chain incidents (SPEC §14): the tracker's heads, reorgs and finality → incidents in the store, which
 * the notification service turns into alerts (woken at once when this process records one).
 */
export async function startIncidents(s: StartUp, store: Store, live: LiveParts, chain: ChainTracker): Promise<void> {
  const incidents = new IncidentDetector({
    chain,
    networks: live.config.networks,
    store,
    clock: s.clock,
    logger: s.part('incidents'),
    onRecorded: () => live.wakeNotifications(),
    // The devnet mining a block per transaction sits still while idle: that is no stall.
    onDemandHeads: devnetOnDemandHeads(s.config),
  });
  await incidents.start();
  live.incidents = incidents;
}
