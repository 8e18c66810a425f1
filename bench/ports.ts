import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. nginx and the Switchyard config need a number
 * written into a file before they start, so port 0 cannot be used there; the race is acceptable for a
 * benchmark and a clash shows up as a failed start, never as a wrong number.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}
