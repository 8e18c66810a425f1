/**
 * The module node:cluster runs in each gateway worker (supervisor.ts forks it): runs the worker until it
 * drains and exits; a start-up failure is logged on stderr as one JSON line and exits 1.
 */
import { createLogger } from '../log.js';
import { runGatewayWorker } from './worker.js';

runGatewayWorker().catch((err: unknown) => {
  createLogger().error('gateway worker failed', { err, pid: process.pid });
  process.exit(1);
});
