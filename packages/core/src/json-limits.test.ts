import { DEFAULT_JSON_LIMITS, jsonLimitError } from './json-limits.js';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('jsonLimitError', () => {
  it('passes ordinary JSON, strings with brackets and escaped quotes included', () => {
    for (const text of [
      '{}',
      '[]',
      '{"a":[1,2,3],"b":{"c":"[[[{{{"}}',
      '"\\"[[["',
      '{"text":"a \\\\" , "x":[{"y":"]],,,"}]}',
      nested(DEFAULT_JSON_LIMITS.maxDepth),
      `[${Array.from({ length: DEFAULT_JSON_LIMITS.maxArrayLength }, () => 0).join(',')}]`,
    ]) {
      expect(jsonLimitError(text)).toBeUndefined();
    }
  });

  it('names the limit a body passes: nesting depth, array length', () => {
    expect(jsonLimitError(nested(DEFAULT_JSON_LIMITS.maxDepth + 1))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'Invalid request: JSON nesting depth exceeds 64',
      data: { max_depth: 64 },
    });
    expect(jsonLimitError(`{"m":${nested(20_000)}}`)?.data).toEqual({ max_depth: 64 });
    const long = `{"a":[${Array.from({ length: 10_001 }, () => '{}').join(',')}]}`;
    expect(jsonLimitError(long)).toMatchObject({ data: { max_array_length: 10_000 } });
    // Commas of an object do not count as array elements.
    const wide = `{${Array.from({ length: 20_000 }, (_, i) => `"k${i}":1`).join(',')}}`;
    expect(jsonLimitError(wide)).toBeUndefined();
    expect(jsonLimitError('[[1,2]]', { maxDepth: 1, maxArrayLength: 5 })?.data).toEqual({ max_depth: 1 });
    expect(jsonLimitError('[1,2,3]', { maxDepth: 5, maxArrayLength: 2 })?.data).toEqual({
      max_array_length: 2,
    });
  });

  it('leaves malformed text to the parser', () => {
    expect(jsonLimitError('{"a": "unterminated')).toBeUndefined();
    expect(jsonLimitError(']]]]')).toBeUndefined();
  });
});
