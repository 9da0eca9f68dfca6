import { Pool } from 'pg';
import { applyMigrations } from '../schema/migrate.js';
import { MIGRATIONS } from '../schema/migrations.js';
import { startTestPostgres, type TestPostgres } from '../testing/test-postgres.js';
import { COORDINATION_MIGRATION } from './schema.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

it('applies the coordination step once when five pools start on a database that has the first step', async () => {
  const url = await server.createDatabase();
  const first = MIGRATIONS.filter((migration) => migration.version < COORDINATION_MIGRATION.version);
  const pools = Array.from({ length: 5 }, () => new Pool({ connectionString: url, max: 2 }));
  try {
    expect(await applyMigrations(pools[0]!, first)).toEqual(first.map((migration) => migration.version));
    const applied = await Promise.all(pools.map((pool) => applyMigrations(pool, MIGRATIONS)));
    expect(applied.flat()).toEqual([COORDINATION_MIGRATION.version]);
    const { rows } = await pools[0]!.query<{ version: number }>(
      'SELECT version FROM agent_schema_migrations ORDER BY version',
    );
    expect(rows.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
    const tables = await pools[0]!.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    );
    expect(tables.rows.map((row) => row.name)).toEqual(
      expect.arrayContaining(['agent_cancel_requests', 'agent_replicas', 'agent_task_claims']),
    );
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
  }
});
