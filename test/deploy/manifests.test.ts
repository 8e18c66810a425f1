/**
 * deploy/'s Kubernetes manifests, compose file and systemd unit agree with the configuration they run
 * and with the gateway: every manifest parses; each config file loads through the product's own loader
 * with exactly the environment its manifest provides; ports, probes, volumes, the data directory and
 * grace periods match that config; every path a file names exists (or is created by the file itself);
 * the unit passes `systemd-analyze verify` where the tool exists. The probe paths are asked of a real
 * built server by test/deploy/dockerfile.test.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { REPO_ROOT } from '../helpers/cli.js';

const DEPLOY = join(REPO_ROOT, 'deploy');
const dir = mkdtempSync(join(tmpdir(), 'switchyard-manifests-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const OPERATIONS = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');

/** A stand-in value for a variable a manifest sets from a secret or the operator's environment. */
function placeholder(name: string): string {
  if (name.endsWith('DATABASE_URL')) return 'postgres://switchyard:secret@postgres:5432/switchyard';
  if (name.endsWith('REDIS_URL')) return 'redis://redis:6379/0';
  return 'https://rpc.example.org/v3/KEY';
}

/** Loads config text with `env` and nothing else from this process's environment. */
function configFrom(text: string, env: Record<string, string>) {
  const file = join(dir, `config-${Object.keys(env).length}-${text.length}.yaml`);
  writeFileSync(file, text);
  return loadConfig(file, { env });
}

function portOf(listen: string): number {
  return Number.parseInt(listen.slice(listen.lastIndexOf(':') + 1), 10);
}

// biome-ignore lint/suspicious/noExplicitAny: manifests are checked field by field below.
type Manifest = Record<string, any>;

describe('deploy/kubernetes', () => {
  const manifests: Manifest[] = [];
  for (const file of readdirSync(join(DEPLOY, 'kubernetes')).filter((name) => name.endsWith('.yaml'))) {
    for (const doc of parseAllDocuments(readFileSync(join(DEPLOY, 'kubernetes', file), 'utf8'))) {
      assert.deepEqual(doc.errors, [], `${file} parses`);
      manifests.push(doc.toJS() as Manifest);
    }
  }
  const ofKind = (kind: string) => manifests.filter((m) => m.kind === kind);
  const deployment = ofKind('Deployment')[0] as Manifest;
  const pod = deployment.spec.template;
  const container = pod.spec.containers[0] as Manifest;
  const configMap = ofKind('ConfigMap')[0] as Manifest;
  const configPath = container.args[container.args.indexOf('--config') + 1] as string;
  const env = Object.fromEntries(
    (container.env as Manifest[]).map((entry) => [entry.name, entry.value ?? placeholder(entry.name)]),
  ) as Record<string, string>;
  const mountAt = (path: string) => (container.volumeMounts as Manifest[]).find((m) => m.mountPath === path);
  const volume = (name: string) => (pod.spec.volumes as Manifest[]).find((v) => v.name === name);
  const config = () => configFrom(configMap.data[basename(configPath)], env);

  it('has a Deployment, Services, a ConfigMap and a PodDisruptionBudget, each named', () => {
    for (const kind of ['Deployment', 'Service', 'ConfigMap', 'PodDisruptionBudget']) {
      assert.ok(ofKind(kind).length > 0, kind);
    }
    for (const m of manifests) assert.ok(m.apiVersion && m.metadata?.name, `${m.kind} has apiVersion and name`);
    assert.equal(container.image, `switchyard-gateway:${VERSION}`, 'the image of this version');
  });

  it('mounts the ConfigMap where --config points; its text is deploy/switchyard-shared.yaml', () => {
    const mount = mountAt(dirname(configPath));
    assert.ok(mount, `a volume mounted at ${dirname(configPath)}`);
    assert.equal(volume(mount.name)?.configMap?.name, configMap.metadata.name);
    assert.equal(configMap.data[basename(configPath)], readFileSync(join(DEPLOY, 'switchyard-shared.yaml'), 'utf8'));
  });

  it('the config loads with exactly the environment the pod gets; its secrets come from the Secret the docs create', () => {
    const loaded = config();
    assert.ok(loaded.database_url && loaded.redis_url, 'several replicas share PostgreSQL and Redis');
    for (const entry of container.env as Manifest[]) {
      const ref = entry.valueFrom?.secretKeyRef;
      if (ref === undefined) continue;
      assert.equal(ref.name, 'switchyard');
      assert.ok(OPERATIONS.includes(`--from-literal=${ref.key}=`), `docs/operations.md creates key ${ref.key}`);
    }
  });

  it('ports, probes and volumes match the config: gateway and API ports, /healthz and /readyz, data_dir', () => {
    const loaded = config();
    const ports = Object.fromEntries((container.ports as Manifest[]).map((p) => [p.name, p.containerPort]));
    assert.deepEqual(ports, { gateway: portOf(loaded.gateway.listen), api: portOf(loaded.api.listen) });
    for (const listen of [loaded.gateway.listen, loaded.api.listen]) assert.match(listen, /^0\.0\.0\.0:/);
    assert.deepEqual(
      ['livenessProbe', 'readinessProbe', 'startupProbe'].map((probe) => container[probe].httpGet),
      [
        { path: '/healthz', port: 'gateway' },
        { path: '/readyz', port: 'gateway' },
        { path: '/healthz', port: 'gateway' },
      ],
    );
    const data = mountAt(loaded.data_dir);
    assert.ok(data && volume(data.name), `data_dir ${loaded.data_dir} is a volume`);
    for (const mount of container.volumeMounts as Manifest[]) assert.ok(volume(mount.name), `volume ${mount.name}`);
    assert.equal(container.securityContext.readOnlyRootFilesystem, true);
    assert.equal(pod.metadata.annotations['prometheus.io/port'], String(ports.api));
    assert.equal(pod.metadata.annotations['prometheus.io/path'], '/metrics');
  });

  it('stops gracefully: the grace period covers preStop and shutdown_grace; one pod at a time is replaced', () => {
    const preStop = Number(container.lifecycle.preStop.exec.command[1]);
    assert.ok(pod.spec.terminationGracePeriodSeconds > preStop + config().shutdown_grace / 1000);
    assert.equal(deployment.spec.strategy.rollingUpdate.maxUnavailable, 0);
  });

  it('Services and the PodDisruptionBudget select the pods; Services target named container ports', () => {
    const labels = pod.metadata.labels as Record<string, string>;
    const matches = (selector: Record<string, string>) =>
      Object.entries(selector).every(([key, value]) => labels[key] === value);
    assert.ok(matches(deployment.spec.selector.matchLabels));
    const portNames = (container.ports as Manifest[]).map((p) => p.name);
    for (const service of ofKind('Service')) {
      assert.ok(matches(service.spec.selector), `${service.metadata.name} selects the pods`);
      for (const port of service.spec.ports) assert.ok(portNames.includes(port.targetPort), port.targetPort);
    }
    const pdb = ofKind('PodDisruptionBudget')[0] as Manifest;
    assert.ok(matches(pdb.spec.selector.matchLabels));
    assert.ok(pdb.spec.minAvailable < deployment.spec.replicas, 'a drain can proceed');
  });
});

describe('deploy/compose.yaml', () => {
  const compose = parse(readFileSync(join(DEPLOY, 'compose.yaml'), 'utf8')) as Manifest;
  const app = compose.services.switchyard as Manifest;
  // Compose interpolation: ${NAME:?message} and ${NAME} take the operator's value (a stand-in here).
  const env = Object.fromEntries(
    Object.entries(app.environment as Record<string, string>).map(([name, value]) => [
      name,
      value.replace(/\$\{([A-Z_]+)(:\?[^}]*)?\}/g, (_, variable: string) =>
        variable === 'POSTGRES_PASSWORD' ? 'secret' : placeholder(name),
      ),
    ]),
  );
  const configPath = app.command[app.command.indexOf('--config') + 1] as string;
  const bind = (app.volumes as string[]).map((v) => v.split(':')).find(([, target]) => target === configPath);

  it('runs Switchyard, PostgreSQL and Redis; builds deploy/Dockerfile from the checkout; this version', () => {
    assert.deepEqual(Object.keys(compose.services).sort(), ['postgres', 'redis', 'switchyard']);
    assert.ok(existsSync(join(DEPLOY, app.build.context, app.build.dockerfile)));
    assert.equal(app.image, `switchyard-gateway:${VERSION}`);
    for (const name of Object.keys(app.depends_on)) {
      assert.ok(compose.services[name].healthcheck, `${name} has a health check to wait for`);
    }
  });

  it('mounts an existing config file where --config points; it loads with the service environment', () => {
    assert.ok(bind, `a bind mount at ${configPath}`);
    const source = join(DEPLOY, bind[0] as string);
    assert.ok(existsSync(source), `${bind[0]} exists`);
    const config = configFrom(readFileSync(source, 'utf8'), env);
    assert.equal(new URL(config.database_url ?? '').hostname, 'postgres');
    assert.equal(new URL(config.redis_url ?? '').hostname, 'redis');
  });

  it('publishes the gateway, keeps the API on 127.0.0.1, puts data_dir in a named volume, outwaits shutdown_grace', () => {
    const config = configFrom(readFileSync(join(DEPLOY, (bind as string[])[0] as string), 'utf8'), env);
    assert.deepEqual(app.ports, [
      `${portOf(config.gateway.listen)}:${portOf(config.gateway.listen)}`,
      `127.0.0.1:${portOf(config.api.listen)}:${portOf(config.api.listen)}`,
    ]);
    const data = (app.volumes as string[]).map((v) => v.split(':')).find(([, target]) => target === config.data_dir);
    assert.ok(data?.[0] !== undefined && data[0] in compose.volumes, 'data_dir is a named volume');
    assert.ok(Number.parseInt(app.stop_grace_period, 10) > config.shutdown_grace / 1000);
  });
});

describe('deploy/systemd/switchyard.service', () => {
  const unitPath = join(DEPLOY, 'systemd/switchyard.service');
  const service = new Map<string, string[]>();
  let section = '';
  for (const line of readFileSync(unitPath, 'utf8').split('\n')) {
    if (/^\[\w+\]$/.test(line)) section = line;
    const match = /^(\w+)=(.*)$/.exec(line);
    if (match && section === '[Service]')
      service.set(match[1] as string, [...(service.get(match[1] as string) ?? []), match[2] as string]);
  }
  const one = (key: string) => (service.get(key) ?? [])[0];
  const unitEnv = Object.fromEntries(
    (service.get('Environment') ?? []).map((pair) => pair.split('=', 2) as [string, string]),
  );
  const exec = (one('ExecStart') ?? '').split(' ');
  const config = () =>
    loadConfig(join(DEPLOY, 'switchyard.yaml'), {
      env: { ...unitEnv, SEPOLIA_ORIGIN_URL: placeholder('SEPOLIA_ORIGIN_URL') },
    });

  it('passes systemd-analyze verify', {
    skip: !existsSync('/usr/bin/systemd-analyze') && 'no systemd-analyze here',
  }, () => {
    // verify checks that ExecStart's program exists: where node is not /usr/bin/node, this node stands in.
    const copy = join(dir, 'switchyard.service');
    const text = readFileSync(unitPath, 'utf8');
    writeFileSync(copy, existsSync('/usr/bin/node') ? text : text.replaceAll('/usr/bin/node', process.execPath));
    const result = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8', timeout: 60_000 });
    assert.deepEqual({ status: result.status, output: `${result.stdout}${result.stderr}` }, { status: 0, output: '' });
  });

  it('is hardened: no new privileges, a read-only system, writes only data_dir, many files, SIGHUP reloads', () => {
    assert.equal(one('NoNewPrivileges'), 'yes');
    assert.equal(one('ProtectSystem'), 'strict');
    assert.deepEqual(service.get('ReadWritePaths'), [config().data_dir]);
    assert.equal(`/var/lib/${one('StateDirectory')}`, config().data_dir, 'StateDirectory creates data_dir');
    assert.ok(Number(one('LimitNOFILE')) >= 65_536);
    assert.equal(one('ExecReload'), '/bin/kill -HUP $MAINPID');
    assert.equal(one('KillSignal'), 'SIGTERM');
    assert.ok(Number(one('TimeoutStopSec')) > config().shutdown_grace / 1000);
  });

  it('runs node on this checkout’s bin with the config docs/operations.md installs; listeners on loopback', () => {
    assert.deepEqual(exec.slice(2), ['serve', '--config', '/etc/switchyard/switchyard.yaml']);
    assert.ok(existsSync(join(REPO_ROOT, (exec[1] ?? '').replace(/^\/opt\/switchyard\//, ''))), exec[1]);
    assert.ok(OPERATIONS.includes('deploy/switchyard.yaml') && OPERATIONS.includes('/etc/switchyard/switchyard.yaml'));
    assert.match(config().gateway.listen, /^127\.0\.0\.1:/);
    assert.match(config().api.listen, /^127\.0\.0\.1:/);
  });
});
