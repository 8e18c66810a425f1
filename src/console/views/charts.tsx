/**
 * Per-origin charts over the last hour (one point a minute, from `origin_stats?series=true`): requests
 * per second and p50 latency, drawn with uPlot. The origin is chosen with a labelled select; the data
 * refreshes every 4 s. A table under the charts gives the same numbers to screen readers.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { usePoll } from '../hooks.js';
import type { OriginRow } from '../types.js';
import type { ViewProps } from '../view.js';

type Series = NonNullable<OriginRow['series']>;

function Chart({
  title,
  unit,
  points,
  pick,
}: {
  title: string;
  unit: string;
  points: Series;
  pick: (p: Series[number]) => number | null;
}) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data: uPlot.AlignedData = [points.map((p) => Date.parse(p.minute) / 1000), points.map(pick)];
  useEffect(() => {
    const el = host.current;
    if (el === null) return;
    if (plot.current === null) {
      plot.current = new uPlot(
        {
          width: Math.max(320, el.clientWidth),
          height: 220,
          series: [
            {},
            { label: `${title} (${unit})`, stroke: '#2563eb', width: 2, fill: 'rgba(37,99,235,0.08)', spanGaps: false },
          ],
          axes: [{}, { label: unit }],
          legend: { show: true },
        },
        data,
        el,
      );
    } else {
      plot.current.setData(data);
    }
  });
  useEffect(
    () => () => {
      plot.current?.destroy();
      plot.current = null;
    },
    [],
  );
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={host} role="img" aria-label={`${title} over the last hour`} />
    </figure>
  );
}

export function ChartsView({ client, onSessionEnded }: ViewProps) {
  const poll = usePoll(
    () => client.get<OriginRow[]>('/accounts/{account}/load_balancers/origin_stats?series=true&per_page=1000'),
    onSessionEnded,
  );
  const origins = poll.data ?? [];
  const [chosen, setChosen] = useState('');
  const key = (o: OriginRow) => `${o.pool_id}/${o.origin_name}`;
  const current = origins.find((o) => key(o) === chosen) ?? origins[0];
  const points = current?.series ?? [];
  return (
    <section aria-labelledby="charts-title">
      <h2 id="charts-title">Per-origin charts, last hour</h2>
      {poll.error !== undefined ? <p class="error">{poll.error}</p> : null}
      <label for="chart-origin">Origin</label>{' '}
      <select
        id="chart-origin"
        value={current === undefined ? '' : key(current)}
        onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}
      >
        {origins.map((o) => (
          <option key={key(o)} value={key(o)}>
            {o.pool_name} / {o.origin_name}
          </option>
        ))}
      </select>
      {current === undefined ? (
        <p>No origin yet.</p>
      ) : (
        <div class="charts" key={key(current)}>
          <Chart
            title="Requests per second"
            unit="req/s"
            points={points}
            pick={(p) => Math.round((p.requests / 60) * 1000) / 1000}
          />
          <Chart title="p50 latency" unit="ms" points={points} pick={(p) => p.p50_ms} />
          <details>
            <summary>Numbers</summary>
            <table aria-label="Per-minute numbers">
              <thead>
                <tr>
                  <th scope="col">Minute</th>
                  <th scope="col">Requests</th>
                  <th scope="col">Errors</th>
                  <th scope="col">p50 (ms)</th>
                </tr>
              </thead>
              <tbody>
                {points
                  .filter((p) => p.requests > 0)
                  .map((p) => (
                    <tr key={p.minute}>
                      <td>{new Date(p.minute).toLocaleTimeString('en-GB')}</td>
                      <td class="n">{p.requests}</td>
                      <td class="n">{p.errors}</td>
                      <td class="n">{p.p50_ms ?? '—'}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </details>
        </div>
      )}
    </section>
  );
}
