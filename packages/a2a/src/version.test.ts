import { checkVersion, requestedVersion } from './version.js';
import { a2aReasonOf, jsonRpcCodeOf } from './a2a-errors.js';

describe('A2A-Version', () => {
  it('reads the header first, then the query; empty is none', () => {
    expect(requestedVersion({ 'a2a-version': ' 1.0 ' })).toBe('1.0');
    expect(requestedVersion({}, new URLSearchParams('A2A-Version=1.0'))).toBe('1.0');
    expect(requestedVersion({ 'a2a-version': '' })).toBeUndefined();
    expect(requestedVersion({})).toBeUndefined();
  });

  it('serves 1.0, and a missing version for 1.0 method names', () => {
    expect(checkVersion('1.0', 'SendMessage')).toBeUndefined();
    expect(checkVersion(undefined, 'SendMessage')).toBeUndefined();
    expect(checkVersion(undefined)).toBeUndefined();
  });

  it('refuses 0.3 methods and every other version with VERSION_NOT_SUPPORTED', () => {
    for (const [version, method] of [
      [undefined, 'message/send'],
      ['1.0', 'tasks/get'],
      ['0.3', undefined],
      ['1.0.1', undefined],
      ['99.0', 'SendMessage'],
    ] as const) {
      const error = checkVersion(version, method);
      expect(error && a2aReasonOf(error)).toBe('VERSION_NOT_SUPPORTED');
      expect(error && jsonRpcCodeOf(error)).toBe(-32009);
    }
    expect(checkVersion(undefined, 'message/send')?.message).toMatch(/0\.3 is not served/);
  });
});
