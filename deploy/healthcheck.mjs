// The container's HEALTHCHECK (deploy/Dockerfile): GET /healthz on the gateway listener, exit 0 on a 200,
// 1 on anything else or no answer within 3 s. The port is SWITCHYARD_GATEWAY_LISTEN's (the variable the
// image's config reads), else 8545; the address is always 127.0.0.1, inside the container. A gateway with
// gateway.tls, or a config whose port does not come from that variable, needs a HEALTHCHECK of its own.
const listen = process.env.SWITCHYARD_GATEWAY_LISTEN || '0.0.0.0:8545';
const url = `http://127.0.0.1:${listen.slice(listen.lastIndexOf(':') + 1)}/healthz`;
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(3000) });
  if (response.status !== 200) process.stderr.write(`healthcheck: ${url} answered ${response.status}\n`);
  process.exitCode = response.status === 200 ? 0 : 1;
} catch (err) {
  process.stderr.write(`healthcheck: ${url}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
