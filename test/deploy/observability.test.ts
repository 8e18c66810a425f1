/**
 * deploy/prometheus/alerts.yaml and deploy/grafana/switchyard.json (SPEC §16): the rules parse (the `yaml`
 * package) as Prometheus rule groups with the alerts the operations guide promises, the dashboard is
 * valid JSON with the panels it promises, and every series either of them names exists in the /metrics
 * of a running Switchyard (started here in front of a real anvil, after one call) — or is one of the
 * few series documented in docs/operations.md as coming from elsewhere.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { post } from '../helpers/http.js';
import { type PromText, scrape } from '../helpers/prometheus.js';
import { familyOf, seriesIn } from '../helpers/promql.js';

/** Series named by the rules that this build does not export itself (docs/operations.md "Monitoring"): Prometheus's own. */
const FROM_ELSEWHERE = ['up'];

interface Rule {
  alert?: string;
  expr?: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const rules = (
  parse(readFileSync(join(REPO_ROOT, 'deploy/prometheus/alerts.yaml'), 'utf8')) as {
    groups: Array<{ name: string; rules: Rule[] }>;
  }
).groups.flatMap((group) => group.rules);

interface Panel {
  title: string;
  type: string;
  targets?: Array<{ expr: string }>;
}
const dashboard = JSON.parse(readFileSync(join(REPO_ROOT, 'deploy/grafana/switchyard.json'), 'utf8')) as {
  title: string;
  panels: Panel[];
  templating: { list: Array<{ query: { query: string } | string }> };
};

let anvil: AnvilNode;
let app: TestApp;
let prom: PromText;

before(async () => {
  anvil = await startTestAnvil();
  app = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['main'] } },
    pools: [{ name: 'main', origins: [{ name: 'a', address: anvil.url }] }],
  });
  const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_accounts', params: [] });
  assert.equal((await post(app.rpcUrl(), call)).status, 200);
  prom = await scrape(app.apiUrl);
});

after(async () => {
  await app?.close();
  await anvil?.stop();
});

/** Each series of these expressions that /metrics lacks (and that is not documented as from elsewhere). */
function missing(exprs: readonly string[]): string[] {
  const absent = new Set<string>();
  for (const expr of exprs) {
    for (const series of seriesIn(expr)) {
      const family = familyOf(series, prom.types);
      if (!prom.types.has(family) && !FROM_ELSEWHERE.includes(family)) absent.add(series);
    }
  }
  return [...absent];
}

describe('deploy/prometheus/alerts.yaml', () => {
  it('is a Prometheus rule file: each rule an alert with an expression, a severity and a summary', () => {
    assert.ok(rules.length >= 5);
    for (const rule of rules) {
      assert.match(rule.alert ?? '', /^Switchyard[A-Z][A-Za-z]+$/);
      assert.ok((rule.expr ?? '').trim().length > 0, `${rule.alert}: expr`);
      assert.ok(['warning', 'critical'].includes(rule.labels?.severity ?? ''), `${rule.alert}: severity`);
      assert.ok((rule.annotations?.summary ?? '').length > 0, `${rule.alert}: summary`);
      if (rule.for !== undefined) assert.match(rule.for, /^\d+[smh]$/, `${rule.alert}: for`);
    }
    assert.equal(new Set(rules.map((rule) => rule.alert)).size, rules.length, 'alert names are unique');
  });

  it('has the rules the operations guide names: origin down, no healthy origin, error ratio, latency, reload failures', () => {
    const byName = new Map(rules.map((rule) => [rule.alert, rule.expr ?? '']));
    assert.match(byName.get('SwitchyardOriginDown') ?? '', /switchyard_origin_healthy == 0/);
    assert.match(
      byName.get('SwitchyardNoHealthyOrigin') ?? '',
      /max by \(network\) \(switchyard_origin_healthy\) == 0/,
    );
    assert.match(byName.get('SwitchyardOriginErrorRatio') ?? '', /switchyard_origin_requests_total/);
    assert.match(byName.get('SwitchyardGatewayErrorRatio') ?? '', /outcome="failed"/);
    assert.match(byName.get('SwitchyardOriginLatencyHigh') ?? '', /switchyard_origin_request_duration_seconds_bucket/);
    assert.match(byName.get('SwitchyardConfigReloadFailed') ?? '', /switchyard_config_reload_failures_total/);
    const operations = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    for (const rule of rules)
      assert.ok(operations.includes(rule.alert as string), `docs/operations.md names ${rule.alert}`);
  });

  it('names only series /metrics exports, or the documented ones from elsewhere', () => {
    assert.deepEqual(missing(rules.map((rule) => rule.expr as string)), []);
    const operations = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    for (const series of FROM_ELSEWHERE) assert.ok(operations.includes(`\`${series}\``), `documented: ${series}`);
  });
});

describe('deploy/grafana/switchyard.json', () => {
  const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
  const exprs = panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));

  it('is a dashboard with latency and errors per origin, requests per method, health and build info', () => {
    assert.equal(dashboard.title, 'Switchyard');
    const titles = panels.map((panel) => panel.title);
    for (const title of [
      'Latency per origin (p50, p90)',
      'Errors per origin',
      'Requests per method',
      'Origin health',
      'Build',
    ]) {
      assert.ok(titles.includes(title), `a panel "${title}"`);
    }
    for (const panel of panels) assert.ok((panel.targets ?? []).length > 0, `${panel.title} has a query`);
  });

  it('queries only series /metrics exports', () => {
    const variables = dashboard.templating.list.map((v) => (typeof v.query === 'string' ? v.query : v.query.query));
    const fromVariables = variables.map((query) => /label_values\((\w+)/.exec(query)?.[1] ?? '');
    assert.deepEqual(missing([...exprs, ...fromVariables]), []);
  });
});

describe('the check itself', () => {
  it('would notice a series that does not exist', () => {
    assert.deepEqual(missing(['sum(rate(switchyard_no_such_series_total[5m])) > 0']), [
      'switchyard_no_such_series_total',
    ]);
  });
});
