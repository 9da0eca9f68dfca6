import { checkOptionNames } from './internal.js';

describe('checkOptionNames', () => {
  it('accepts known names, also with undefined values', () => {
    expect(() => checkOptionNames('Thing', { a: 1, b: undefined }, ['a', 'b', 'c'])).not.toThrow();
  });
  it('names every unknown option and lists the accepted ones, sorted', () => {
    expect(() => checkOptionNames('Thing', { timeout: 5, z: 1 }, ['b', 'a'])).toThrow(
      'Thing does not accept the options "timeout", "z"; accepted: a, b',
    );
    expect(() => checkOptionNames('Thing', { x: 1 }, ['a'])).toThrow(
      expect.objectContaining({ code: 'VALUE_ERROR' }),
    );
  });
});
