import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../clock.js';
import { buildConfig } from '../../config/load.js';
import { isSwitchyardError } from '../../errors/base.js';
import { NetworkLifecycle } from './lifecycle.js';

const config = buildConfig(
  {
    networks: {
      sepolia: { chain_id: 11155111 },
      rinkeby: { chain_id: 4, retired_on: '2023-01-30', replacement: 'sepolia' },
      lonely: { chain_id: 5, retired_on: '2030-06-01' },
    },
  },
  'test',
);

describe('NetworkLifecycle', () => {
  it('a network without retired_on is plainly supported', () => {
    const lifecycle = new NetworkLifecycle('sepolia', config.networks.sepolia!, new ManualClock('2099-01-01'));
    assert.deepEqual(lifecycle.check(), {});
  });

  it('the last millisecond before 2023-01-30 00:00 UTC is served with deprecation headers', () => {
    const clock = new ManualClock('2023-01-29T23:59:59.999Z');
    const lifecycle = new NetworkLifecycle('rinkeby', config.networks.rinkeby!, clock);
    assert.deepEqual(lifecycle.check(), {
      deprecation: '@1675036800',
      sunset: 'Mon, 30 Jan 2023 00:00:00 GMT',
      link: '</v1/sepolia>; rel="successor-version"',
    });
  });

  it('from 00:00 UTC on the date, every request is refused with 410', () => {
    const clock = new ManualClock('2023-01-30T00:00:00.000Z');
    const lifecycle = new NetworkLifecycle('rinkeby', config.networks.rinkeby!, clock);
    assert.throws(
      () => lifecycle.check(),
      (err: unknown) => {
        assert.ok(isSwitchyardError(err));
        assert.equal(err.code, 'NETWORK_RETIRED');
        assert.equal(err.httpStatus, 410);
        assert.equal(err.spec.rpc, -32001);
        assert.deepEqual(err.details, { retired_on: '2023-01-30', replacement: 'sepolia' });
        return true;
      },
    );
  });

  it('without a replacement: no Link header, and the message says so', () => {
    const clock = new ManualClock('2030-01-01');
    const lifecycle = new NetworkLifecycle('lonely', config.networks.lonely!, clock);
    assert.equal(lifecycle.check().link, undefined);
    clock.set('2030-06-01T00:00:00Z');
    assert.throws(() => lifecycle.check(), /retired on 2030-06-01; no replacement is configured/);
  });
});
