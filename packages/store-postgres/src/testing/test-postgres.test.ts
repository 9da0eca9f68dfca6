import { Client } from 'pg';
import { startTestPostgres, type TestPostgres } from './test-postgres.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

it('gives each caller an empty database of its own on a real server', async () => {
  const [first, second] = [await server.createDatabase(), await server.createDatabase()];
  expect(first).not.toBe(second);
  const client = new Client({ connectionString: first });
  await client.connect();
  try {
    await client.query('CREATE TABLE probe (id int)');
    const { rows } = await client.query<{ name: string }>('SELECT current_database() AS name');
    expect(first.endsWith(`/${rows[0]!.name}`)).toBe(true);
  } finally {
    await client.end();
  }
});
