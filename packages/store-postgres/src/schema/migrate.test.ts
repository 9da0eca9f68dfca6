import { Pool } from 'pg';
import { startTestPostgres, type TestPostgres } from '../testing/test-postgres.js';
import { applyMigrations } from './migrate.js';
import { MIGRATIONS } from './migrations.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

it('applies the schema once when five pools start on an empty database at the same time', async () => {
  const url = await server.createDatabase();
  const pools = Array.from({ length: 5 }, () => new Pool({ connectionString: url, max: 2 }));
  try {
    const applied = await Promise.all(pools.map((pool) => applyMigrations(pool, MIGRATIONS)));
    const versions = MIGRATIONS.map((migration) => migration.version);
    // Every version was applied by exactly one of them; the others found nothing to do.
    expect(applied.flat().sort((a, b) => a - b)).toEqual(versions);
    const { rows } = await pools[0]!.query<{ version: number }>(
      'SELECT version FROM agent_schema_migrations ORDER BY version',
    );
    expect(rows.map((row) => row.version)).toEqual(versions);
    const tables = await pools[0]!.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'agent_%' ORDER BY 1",
    );
    expect(tables.rows.map((row) => row.name)).toEqual(
      expect.arrayContaining([
        'agent_approvals',
        'agent_registry_entries',
        'agent_run_reports',
        'agent_task_events',
        'agent_tasks',
      ]),
    );
    expect(await applyMigrations(pools[1]!, MIGRATIONS)).toEqual([]);
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
  }
});
