/**
 * The gateway listener: `POST /v1/{network}` on `gateway.listen` (default 127.0.0.1:8545, optional TLS).
 * HTTP-level checks happen here in this order, each with its catalog error:
 *   path (404) → HTTP method (405, Allow: POST; CORS preflight answered) → API key (401, when configured)
 *   → Content-Type (415) → body size (413) → the JSON-RPC handler (handler.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HealthView, PoolDirectory } from '../balancing/model.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { SwitchyardError } from '../errors/base.js';
import type { Logger } from '../log.js';
import { startListener } from './listener.js';
import { asSwitchyardError, sendBody, sendError } from './respond.js';

export interface GatewayOptions {
  config: Readonly<Config>;
  directory: PoolDirectory;
  health: HealthView;
  clock: Clock;
  logger: Logger;
}

export interface Gateway {
  readonly url: string;
  close(graceMs: number): Promise<void>;
}

const PATH = /^\/v1\/([^/?#]+)\/?(?:\?.*)?$/;

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, logger } = options;
  const handle = async (req: IncomingMessage, _res: ServerResponse): Promise<void> => {
    const match = PATH.exec(req.url ?? '/');
    if (!match) {
      throw new SwitchyardError(
        'NOT_FOUND',
        `No such path ${JSON.stringify(req.url)}; send JSON-RPC to POST /v1/{network}.`,
      );
    }
    if (req.method !== 'POST') {
      throw new SwitchyardError(
        'HTTP_METHOD_NOT_ALLOWED',
        `HTTP ${req.method} is not supported; send JSON-RPC with POST.`,
        {
          headers: { allow: 'POST' },
        },
      );
    }
    // Forwarding lands in the next commit.
    throw new SwitchyardError('NO_HEALTHY_ORIGIN', 'Forwarding is not wired yet.');
  };

  const listener = await startListener({ listen: config.gateway.listen, tls: config.gateway.tls }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      const error = asSwitchyardError(err);
      if (error.code === 'GATEWAY_INTERNAL') logger.error('gateway request failed', { err });
      sendError(res, error);
    });
  });
  logger.info('gateway listening', { url: listener.url });
  void sendBody;
  return { url: listener.url, close: (graceMs) => listener.close(graceMs) };
}
