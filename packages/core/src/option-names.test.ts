import { checkOptionNames, optionNames } from './internal.js';

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

describe('optionNames', () => {
  it('lists the names of an options type', () => {
    interface Options {
      a: number;
      b?: string;
    }
    expect(optionNames<Options>({ a: true, b: true })).toEqual(['a', 'b']);
    // @ts-expect-error a name the type does not have
    optionNames<Options>({ a: true, b: true, c: true });
    // @ts-expect-error a name of the type is missing
    optionNames<Options>({ a: true });
  });
});
