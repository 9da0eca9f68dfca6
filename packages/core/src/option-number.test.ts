import { ValueError } from './index.js';
import { numberOption } from './internal.js';

describe('numberOption', () => {
  it('falls back only when the option is absent', () => {
    expect(numberOption('n', undefined, 7)).toBe(7);
    expect(numberOption('n', 0, 7)).toBe(0);
  });
  it('enforces finite, minimum, exclusivity and integers, naming the option', () => {
    expect(() => numberOption('timeoutMs', -1, 1)).toThrow(ValueError);
    expect(() => numberOption('timeoutMs', -1, 1)).toThrow(
      'timeoutMs must be a non-negative finite number, got -1',
    );
    expect(() => numberOption('n', Number.NaN, 1)).toThrow(/got NaN/);
    expect(() => numberOption('n', Number.POSITIVE_INFINITY, 1)).toThrow(ValueError);
    expect(() => numberOption('n', '5' as unknown as number, 1)).toThrow(ValueError);
    expect(() => numberOption('size', 0, 1, { min: 1, integer: true })).toThrow(
      'size must be a positive integer, got 0',
    );
    expect(() => numberOption('size', 1.5, 1, { min: 1, integer: true })).toThrow(ValueError);
    expect(() => numberOption('ms', 0, 1, { exclusive: true })).toThrow(
      'ms must be a positive finite number, got 0',
    );
    expect(numberOption('ms', 0.5, 1, { exclusive: true })).toBe(0.5);
    expect(() => numberOption('ping', 0, 1, { min: 1 })).toThrow('ping must be a finite number >= 1, got 0');
    expect(numberOption('ping', 1, 5, { min: 1 })).toBe(1);
  });
});
