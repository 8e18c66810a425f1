/**
 * A full garbage collection in a process the bench started with `--inspect=127.0.0.1:<port>` (the
 * fan-out leg's Switchyard): the inspector's `HeapProfiler.collectGarbage` over its WebSocket. Reading
 * RSS right after one, the garbage a previous leg or the handshakes left no longer counts as memory the
 * connections hold. Bounded (10 s); the inspector listens on 127.0.0.1 only, on a port picked for the run.
 */
import WebSocket from 'ws';

export async function collectGarbage(port: number, timeoutMs = 10_000): Promise<void> {
  const list = (await (
    await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(timeoutMs) })
  ).json()) as Array<{ webSocketDebuggerUrl?: string }>;
  const url = list[0]?.webSocketDebuggerUrl;
  if (url === undefined) throw new Error(`no inspector target on 127.0.0.1:${port}`);
  const ws = new WebSocket(url, { perMessageDeflate: false });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the inspector did not answer collectGarbage')), timeoutMs);
      ws.once('error', reject);
      ws.once('open', () => ws.send('{"id":1,"method":"HeapProfiler.collectGarbage"}'));
      ws.on('message', (data: Buffer) => {
        if ((JSON.parse(data.toString()) as { id?: unknown }).id !== 1) return;
        clearTimeout(timer);
        resolve();
      });
    });
  } finally {
    ws.terminate();
  }
}
