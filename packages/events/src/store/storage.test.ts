import { UnavailableError, ValueError } from '@agent/core';
import { InMemoryStorage } from './storage.js';

describe('InMemoryStorage', () => {
  it('gets, sets, deletes and lists keys by prefix', async () => {
    const storage = new InMemoryStorage();
    await storage.set('agent:a', { n: 1 });
    await storage.set('agent:b', [1, 2]);
    await storage.set('other', 'x');
    await storage.set('__proto__', 'plain key');
    expect(await storage.get('agent:a')).toEqual({ n: 1 });
    expect(await storage.get('__proto__')).toBe('plain key');
    expect(await storage.get('missing')).toBeNull();
    expect(await storage.keys('agent:')).toEqual(['agent:a', 'agent:b']);
    expect(await storage.delete('agent:a')).toBe(true);
    expect(await storage.delete('agent:a')).toBe(false);
    expect(await storage.keys()).toEqual(['__proto__', 'agent:b', 'other']);
  });

  it('copies values in and out', async () => {
    const storage = new InMemoryStorage();
    const value = { list: [1] };
    await storage.set('k', value);
    value.list.push(2);
    const read = (await storage.get('k')) as { list: number[] };
    read.list.push(3);
    expect(await storage.get('k')).toEqual({ list: [1] });
  });

  it('rejects bad keys and values, and calls after close', async () => {
    const storage = new InMemoryStorage();
    await expect(storage.set('', 1)).rejects.toThrow(ValueError);
    await expect(storage.set('k', undefined as never)).rejects.toThrow(ValueError);
    storage.close();
    await expect(storage.get('k')).rejects.toThrow(UnavailableError);
  });
});
