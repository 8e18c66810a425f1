/**
 * An origin that needs credentials, in front of a real node (anvil): a node:http server on 127.0.0.1:0
 * that answers 401 without the Basic credentials (or without the required header, when one is set), 404
 * off the keyed path and query, 503 while `state.broken`, and otherwise forwards the JSON-RPC body to
 * `upstream`. Every request it gets is kept in `seen`, so a test can check that the gateway and the
 * monitors send the very same credentials.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface KeyedOriginOptions {
  user: string;
  pass: string;
  /** Path and query the origin serves, e.g. `/v3/<key>?apikey=<k>`. */
  path: string;
  /** A header every request must carry, e.g. `['x-api-key', 'value']` (name in lower case). */
  header?: readonly [string, string];
}

export interface SeenRequest {
  url: string;
  authorization: string | undefined;
  method: string | undefined;
  header: string | undefined;
}

export interface KeyedOrigin {
  readonly seen: SeenRequest[];
  readonly state: { broken: boolean };
  /** `http://user:pass@127.0.0.1:<port><path>`: the address with every secret in it. */
  readonly address: string;
  readonly port: number;
  /** `Basic …` the origin expects. */
  readonly basic: string;
  close(): Promise<void>;
}

export async function startKeyedOrigin(upstream: string, options: KeyedOriginOptions): Promise<KeyedOrigin> {
  const seen: SeenRequest[] = [];
  const state = { broken: false };
  const basic = `Basic ${Buffer.from(`${options.user}:${options.pass}`).toString('base64')}`;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const header = options.header === undefined ? undefined : req.headers[options.header[0]];
      seen.push({
        url: req.url ?? '',
        authorization: req.headers.authorization,
        method: req.method,
        header: typeof header === 'string' ? header : undefined,
      });
      if (req.headers.authorization !== basic || (options.header !== undefined && header !== options.header[1])) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="node"' }).end('unauthorized');
        return;
      }
      if (req.url !== options.path) return void res.writeHead(404).end('no such key');
      if (state.broken) return void res.writeHead(503).end('maintenance');
      const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    seen,
    state,
    port,
    basic,
    address: `http://${options.user}:${options.pass}@127.0.0.1:${port}${options.path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
