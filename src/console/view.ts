/** What every view of the console gets from the app (views/index.ts lists the views). */
import type { Client } from './api.js';

export interface ViewProps {
  client: Client;
  /** The token may write (its permission groups); the API still decides every write. */
  canWrite: boolean;
  /** A 401: back to sign-in with this message. */
  onSessionEnded: (message: string) => void;
}
