import type { Compilable, QueryResult, RootOperationNode } from 'kysely';
import type { Db } from './database.js';

/**
 * A query that runs many times a second with the same shape (the health rounds: 1000 pools every 10 s
 * run ~16 statements each): Kysely builds its operation tree and compiles it to SQL once per dialect,
 * and each run only fills in the values. Building and compiling cost more than SQLite's execution of a
 * cached statement (store/database.ts), so this halves the store's share of a round.
 *
 * `build` receives one marker per name instead of values and must use each as a plain value, exactly as
 * the query would use the real one — no value may shape the SQL (no lists of varying length, no branches
 * on a value). Compiling finds the markers among the compiled parameters; parameters that are not
 * markers (constants written in the query) are kept as compiled. A name whose marker is missing from the
 * compiled parameters is a programming error and throws on first use.
 *
 * The compiled form is kept per dialect adapter (a Kysely instance and its transactions share one), so a
 * query runs on the store's connection or inside a transaction alike.
 */
export class ReusableQuery<Name extends string, Row = unknown> {
  readonly #names: readonly Name[];
  readonly #build: (db: Db, values: Readonly<Record<Name, unknown>>) => Compilable<Row>;
  readonly #compiled = new WeakMap<object, CompiledQuery>();

  constructor(names: readonly Name[], build: (db: Db, values: Readonly<Record<Name, unknown>>) => Compilable<Row>) {
    this.#names = names;
    this.#build = build;
  }

  async run(db: Db, values: Readonly<Record<Name, unknown>>): Promise<QueryResult<Row>> {
    const adapter = db.getExecutor().adapter;
    let compiled = this.#compiled.get(adapter);
    if (compiled === undefined) {
      compiled = this.#compile(db);
      this.#compiled.set(adapter, compiled);
    }
    const parameters = new Array<unknown>(compiled.slots.length);
    for (let i = 0; i < compiled.slots.length; i++) {
      const slot = compiled.slots[i] as ParameterSlot;
      parameters[i] = slot.name === undefined ? slot.constant : values[slot.name as Name];
    }
    return db.executeQuery<Row>({ sql: compiled.sql, query: compiled.query, parameters });
  }

  #compile(db: Db): CompiledQuery {
    const markers = new Map<string, Name>();
    const placeholders = {} as Record<Name, unknown>;
    for (const name of this.#names) {
      const marker = `\u0000reusable-query:${name}\u0000`;
      markers.set(marker, name);
      placeholders[name] = marker;
    }
    const { sql, query, parameters } = this.#build(db, placeholders).compile();
    const used = new Set<Name>();
    const slots = parameters.map((parameter): ParameterSlot => {
      const name = typeof parameter === 'string' ? markers.get(parameter) : undefined;
      if (name === undefined) return { constant: parameter };
      used.add(name);
      return { name };
    });
    const unused = this.#names.filter((name) => !used.has(name));
    if (unused.length > 0) throw new Error(`reusable query: ${unused.join(', ')} not among the parameters of ${sql}`);
    return { sql, query, slots };
  }
}

interface CompiledQuery {
  sql: string;
  query: RootOperationNode;
  slots: ParameterSlot[];
}

type ParameterSlot = { name: string; constant?: undefined } | { name?: undefined; constant: unknown };
