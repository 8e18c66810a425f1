/**
 * The module node:cluster runs in each gateway worker (supervisor.ts forks it): runs the worker until it
 * drains and exits; a start-up failure is logged on stderr as one JSON line and exits 1.
 */
import { runGatewayWorker } from './worker.js';

runGatewayWorker().catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(
    `${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: 'gateway worker failed', error: message, pid: process.pid })}\n`,
  );
  process.exit(1);
});
