/**
 * Start-up steps of the alerting side (main.ts calls them last): notifications and chain incidents. Each
 * builds its part from the config and outbound policy in `live` and puts it there, so the same step can
 * build a replacement from a new config (see live.ts); `live.stop()` stops whichever are current.
 */
import type { ChainTracker } from '../chain/tracker.js';
import { devnetOnDemandHeads } from '../devnet/idle-heads.js';
import { IncidentDetector } from '../incidents/detector.js';
import { IntegrityIncidents } from '../incidents/integrity.js';
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
 * the notification service turns into alerts (woken at once when this process records one); and the
 * origin integrity alert (SPEC §18), fed by the gateway's verification failures through `live`.
 */
export async function startIncidents(s: StartUp, store: Store, live: LiveParts, chain: ChainTracker): Promise<void> {
  // Both record in the store and wake the notification service; they read the config in force at start.
  const parts = {
    chain,
    networks: live.config.networks,
    store,
    clock: s.clock,
    logger: s.part('incidents'),
    onRecorded: () => live.wakeNotifications(),
  };
  // The devnet mining a block per transaction sits still while idle: that is no stall.
  const incidents = new IncidentDetector({ ...parts, onDemandHeads: devnetOnDemandHeads(s.config) });
  await incidents.start();
  live.incidents = incidents;
  const integrity = new IntegrityIncidents(parts);
  await integrity.start();
  live.integrity = integrity;
}
