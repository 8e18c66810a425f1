/**
 * The parts of a running Switchyard that follow the config file rather than the process: what a reload
 * (SPEC §15 "Reload without restart") has to rebuild or refresh while the listeners keep running.
 *
 * - `config`: the config in force.
 * - `outbound`: the one outbound target policy (`outbound.*`), built from it (config/outbound.ts).
 * - `notifications` (`webhooks.*`, mail settings), `incidents` (`incidents`) and `integrity`: background services
 *   started by steps of their own (main/alerts.ts) from `config` and `outbound`; a new config means
 *   stopping the one in `live` and starting another with the same step.
 *
 * Whoever calls into a part that may be replaced goes through this holder at the time of the call (the
 * health monitor and the incident detector wake `live.notifications`), never keeps the instance. The
 * gateway and API listeners stay; their live settings (networks, limits, TLS files) are theirs to
 * refresh (main/reload.ts hands them the new config). The outbound policy stays one object: a reload
 * retrusts it (outbound/policy.ts `retrust`).
 */
import type { Config } from '../config/schema.js';
import type { IncidentDetector } from '../incidents/detector.js';
import type { IntegrityIncidents } from '../incidents/integrity.js';
import type { NotificationService } from '../notifications/service.js';
import type { OutboundPolicy } from '../outbound/policy.js';

export class LiveParts {
  config: Readonly<Config>;
  outbound: OutboundPolicy;
  notifications: NotificationService | undefined;
  incidents: IncidentDetector | undefined;
  /** The origin integrity alert (SPEC §18), started with `incidents`; the gateway reports to it through here. */
  integrity: IntegrityIncidents | undefined;

  constructor(config: Readonly<Config>, outbound: OutboundPolicy) {
    this.config = config;
    this.outbound = outbound;
  }

  /** Sends the alerts of what this process just recorded now, not at the next poll (when started). */
  wakeNotifications(): void {
    this.notifications?.wake();
  }

  /** Stops the notification service or the incident detector and runs `start`, which puts its replacement here. */
  async restart(part: 'notifications' | 'incidents', start: () => Promise<void>): Promise<void> {
    const current = this[part];
    // The integrity alert starts with the incident detector (main/alerts.ts), so it stops with it.
    const integrity = part === 'incidents' ? this.integrity : undefined;
    this[part] = undefined;
    if (part === 'incidents') this.integrity = undefined;
    await Promise.all([current?.stop(), integrity?.stop()]);
    await start();
  }

  /** Stops the current incident detector, then the notification service (undelivered alerts stay queued). */
  async stop(): Promise<void> {
    const { incidents, integrity, notifications } = this;
    this.incidents = undefined;
    this.integrity = undefined;
    this.notifications = undefined;
    try {
      await Promise.all([incidents?.stop(), integrity?.stop()]);
    } finally {
      await notifications?.stop();
    }
  }
}
