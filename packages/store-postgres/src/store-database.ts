/**
 * The connection options every store of this package takes: a PostgresDatabase to share, or what
 * to open one of its own with.
 */
import { ValueError } from '@agent/core';
import { PostgresDatabase, type PostgresDatabaseOptions } from './database.js';

export interface PostgresConnectionOptions extends PostgresDatabaseOptions {
  /**
   * A database shared with other stores (its pool and its migrations run once). Closing the store
   * leaves it open. Either this or the options of a database of the store's own.
   */
  database?: PostgresDatabase;
}

/** The names of {@link PostgresConnectionOptions}, for each store's option-name check. */
export const CONNECTION_OPTION_NAMES = [
  'database',
  'connectionString',
  'pool',
  'poolOptions',
  'statementTimeoutMs',
  'preparedStatements',
] as const;

/**
 * The store's database, and whether the store opened it (and so closes it).
 * @throws ValueError for `database` next to another connection option, or no connection at all.
 */
export function databaseOf(
  options: PostgresConnectionOptions,
  feature: string,
): { database: PostgresDatabase; owned: boolean } {
  if (options.database !== undefined) {
    if (!(options.database instanceof PostgresDatabase))
      throw new ValueError(`${feature} option database must be a PostgresDatabase`, {
        data: { field: 'database' },
      });
    const extra = CONNECTION_OPTION_NAMES.filter(
      (name) => name !== 'database' && options[name] !== undefined,
    );
    if (extra.length > 0)
      throw new ValueError(`${feature} takes database or ${extra.join(', ')}, not both`, {
        data: { field: 'database' },
      });
    return { database: options.database, owned: false };
  }
  const { connectionString, pool, poolOptions, statementTimeoutMs, preparedStatements } = options;
  return {
    database: new PostgresDatabase({
      connectionString,
      pool,
      poolOptions,
      statementTimeoutMs,
      preparedStatements,
    }),
    owned: true,
  };
}
