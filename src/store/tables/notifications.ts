/** Row types of the notification tables (policies, destinations, deliveries, history). Owned by `src/notifications/`. */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by the notifications migration
export interface NotificationTables {}
