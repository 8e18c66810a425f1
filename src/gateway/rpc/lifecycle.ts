/**
 * Network lifecycle (SPEC §2): a network is supported, or retired from `retired_on` (00:00 UTC) on.
 * - Before that instant, responses carry
 *     Deprecation: @<unix seconds of retired_on>   (RFC 9745: the resource is deprecated as of that date)
 *     Sunset: <HTTP-date of retired_on>            (RFC 8594)
 *     Link: </v1/{replacement}>; rel="successor-version"   (when a replacement is configured)
 * - From that instant on, every request gets 410 with JSON-RPC code -32001 and
 *   data {retired_on, replacement}; the message names the date and the replacement path. The 410 keeps
 *   the Sunset and Link headers so clients can follow the successor.
 * The instant is compared with the injected Clock on every request, so tests stand on either side.
 */
import type { Clock } from '../../clock.js';
import type { NetworkConfig } from '../../config/schema.js';
import { SwitchyardError } from '../../errors/base.js';

export class NetworkLifecycle {
  readonly #name: string;
  readonly #network: NetworkConfig;
  readonly #clock: Clock;
  readonly #retireAt: number | undefined;
  readonly #headers: Readonly<Record<string, string>>;

  constructor(name: string, network: NetworkConfig, clock: Clock) {
    this.#name = name;
    this.#network = network;
    this.#clock = clock;
    this.#retireAt = network.retired_on === undefined ? undefined : Date.parse(`${network.retired_on}T00:00:00Z`);
    const headers: Record<string, string> = {};
    if (this.#retireAt !== undefined) {
      headers.deprecation = `@${Math.floor(this.#retireAt / 1000)}`;
      headers.sunset = new Date(this.#retireAt).toUTCString();
      if (network.replacement !== undefined) headers.link = `</v1/${network.replacement}>; rel="successor-version"`;
    }
    this.#headers = headers;
  }

  /** The retirement instant has come (the gateway's readiness leaves retired networks out). */
  retired(): boolean {
    return this.#retireAt !== undefined && this.#clock.now() >= this.#retireAt;
  }

  /** Throws NETWORK_RETIRED from the retirement instant on; otherwise returns the headers to add. */
  check(): Readonly<Record<string, string>> {
    if (this.#retireAt === undefined) return this.#headers;
    if (this.#clock.now() < this.#retireAt) return this.#headers;
    const { retired_on, replacement } = this.#network;
    const instead =
      replacement === undefined
        ? 'no replacement is configured'
        : `send the same request to /v1/${replacement} instead (only the last path segment changes)`;
    throw new SwitchyardError('NETWORK_RETIRED', `Network ${this.#name} was retired on ${retired_on}; ${instead}.`, {
      details: { retired_on, replacement: replacement ?? null },
      headers: this.#headers,
    });
  }
}
