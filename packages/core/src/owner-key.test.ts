import { ownerKey } from './owner-key.js';

describe('ownerKey', () => {
  it('gives one key per owner and id, which no other owner or id can make', () => {
    const cases: [string, string, string][] = [
      ['', 'anonymous', 'task-1'],
      ['a', 'b', 'c'],
      ['a:1', 'b', 'c'],
      ['a', '1:b', 'c'],
      ['a1:', 'b', 'c'],
      ['', '1:a1:b', 'c'],
      ['1:a', '1:b', 'c'],
      ['a', 'b1:c', ''],
      ['a', 'b', '1:c'],
      ['ab', '', 'c'],
      ['', 'ab', 'c'],
      ['', '', 'abc'],
      ['☃', '😀', 'x'],
    ];
    const keys = cases.map(([tenant, principal, id]) => ownerKey({ tenant, principal_id: principal }, id));
    expect(new Set(keys).size).toBe(cases.length);
    expect(ownerKey({ tenant: 'a', principal_id: 'b' }, 'c')).toBe(
      ownerKey({ tenant: 'a', principal_id: 'b' }, 'c'),
    );
  });
});
