// The registry store: owned entries with a TTL, refusals, skill filters and keyset pages.
// Run with: pnpm --filter @agent/events build && node packages/events/examples/registry-store.js
const { InMemoryRegistryStore } = require('@agent/events');

async function main() {
  // A hand-moved clock makes expiry visible without waiting; a real registry uses the default Date.now.
  let now = Date.parse('2026-01-01T00:00:00Z');
  const store = new InMemoryRegistryStore({ now: () => now });
  const limits = { ttlMs: 30_000, maxEntries: 10_000 };
  const alice = { tenant: 'acme', principal_id: 'alice' };
  const bob = { tenant: 'acme', principal_id: 'bob' };
  const card = (name, skills) => ({ name, description: name, url: `http://127.0.0.1:8080/${name}`, skills });

  // Register: a name is unique per tenant among live entries, whoever asks.
  const { entry } = await store.createEntry(
    alice,
    card('writer', [{ id: 'write', name: 'Write', tags: ['text'] }]),
    limits,
  );
  console.log('registered:', entry.name, 'until', entry.expires_at);
  console.log('again:', (await store.createEntry(bob, card('writer', []), limits)).refused);
  await store.createEntry(bob, card('reader', [{ id: 'read', name: 'Read', tags: ['text'] }]), limits);

  // Only the owner may renew, replace or delete; for anyone else the entry looks absent.
  console.log("bob renews alice's entry:", await store.heartbeatEntry(bob, 'writer', limits.ttlMs));

  // Discovery: by skill id or tag, name order, keyset pages.
  const page = await store.listEntries({ tenant: 'acme', skill: 'text', pageSize: 1 });
  const next = await store.listEntries({
    tenant: 'acme',
    skill: 'text',
    pageSize: 1,
    pageToken: page.next_page_token,
  });
  console.log('text agents:', [...page.entries, ...next.entries].map((e) => e.name).join(', '));

  // Alice heartbeats; bob does not, and his entry expires.
  now += 20_000;
  await store.heartbeatEntry(alice, 'writer', limits.ttlMs);
  now += 20_000;
  console.log('live:', (await store.listEntries({ tenant: 'acme' })).entries.map((e) => e.name).join(', '));
  store.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
