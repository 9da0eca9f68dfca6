import { ValueError } from '@agent/core';
import { Pool } from 'pg';
import { PostgresDatabase } from './database.js';
import { PostgresRunStore } from './run-store/postgres-run-store.js';
import { startTestPostgres, type TestPostgres } from './testing/test-postgres.js';

let server: TestPostgres;
let url: string;
beforeAll(async () => {
  server = await startTestPostgres();
  url = await server.createDatabase();
}, 60_000);
afterAll(() => server?.stop());

/** The statements the pool's one connection has prepared whose text starts with `prefix`. */
async function preparedOn(pool: Pool, prefix: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM pg_prepared_statements WHERE starts_with(statement, $1)',
    [prefix],
  );
  return rows[0]!.n;
}

describe('PostgresDatabase preparedStatements', () => {
  it('prepares a statement once per connection and runs it again by name', async () => {
    const pool = new Pool({ connectionString: url, max: 1 });
    const database = new PostgresDatabase({ pool });
    try {
      const twice = 'SELECT $1::integer + 1 AS n';
      expect((await database.query<{ n: number }>(twice, [1])).rows).toEqual([{ n: 2 }]);
      expect((await database.query<{ n: number }>(twice, [41])).rows).toEqual([{ n: 42 }]);
      expect(await preparedOn(pool, twice)).toBe(1);
      // The store's statements go the same way: a snapshot saved twice is one prepared upsert.
      const store = new PostgresRunStore({ database });
      const task = { id: 'p', state: 'working', created_at: '2026-05-01T00:00:00Z' } as never;
      await store.saveTaskSnapshot(task);
      await store.saveTaskSnapshot(task);
      expect(await preparedOn(pool, 'WITH written')).toBe(1);
      await store.close();
    } finally {
      await database.close();
      await pool.end();
    }
  });

  it('prepares nothing with preparedStatements: false, for a pooler that cannot keep them', async () => {
    const pool = new Pool({ connectionString: url, max: 1 });
    const database = new PostgresDatabase({ pool, preparedStatements: false });
    try {
      const text = 'SELECT $1::integer * 2 AS n';
      expect((await database.query<{ n: number }>(text, [21])).rows).toEqual([{ n: 42 }]);
      expect(await preparedOn(pool, text)).toBe(0);
    } finally {
      await database.close();
      await pool.end();
    }
  });

  it('refuses a preparedStatements that is not a boolean', () => {
    expect(() => new PostgresDatabase({ connectionString: url, preparedStatements: 'yes' as never })).toThrow(
      ValueError,
    );
  });
});
