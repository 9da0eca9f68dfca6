import { fullFormats } from 'ajv-formats/dist/formats';
import { isDateTime } from './date-time-format.js';
import { validateTask } from './validate.js';
import { createMessage, createTask } from './factories.js';

const reference = (fullFormats['date-time'] as { validate: (text: string) => boolean }).validate;

/** Every way a timestamp's characters can go wrong, around shapes both valid and not. */
function variants(): string[] {
  const out = new Set<string>();
  const seeds = [
    '2026-11-28T01:38:56.971Z',
    '2026-11-28T01:38:56Z',
    '2024-02-29T23:59:60.5Z',
    '2023-02-29T12:00:00Z',
    '2000-02-29T00:00:00.000000001Z',
    '1900-02-29T00:00:00Z',
    '2026-12-31T23:59:60Z',
    '2026-12-31T22:59:60Z',
    '2026-04-31T10:00:00Z',
    '2026-11-28t01:38:56Z',
    '2026-11-28 01:38:56Z',
    '2026-11-28T01:38:56+02:00',
    '2026-11-28T01:38:56.Z',
    '2026-11-28T01:38:56,5Z',
    '2026-11-28T24:00:00Z',
    '2026-11-28T23:60:00Z',
    '2026-00-28T01:38:56Z',
    '2026-13-28T01:38:56Z',
    '2026-11-00T01:38:56Z',
    '２026-11-28T01:38:56Z',
  ];
  const swaps = ['0', '9', 'a', '-', ':', '.', 'Z', 'T', ' ', '٣'];
  for (const seed of seeds) {
    out.add(seed);
    for (let i = 0; i < seed.length; i++) {
      for (const swap of swaps) out.add(seed.slice(0, i) + swap + seed.slice(i + 1));
      out.add(seed.slice(0, i) + seed.slice(i + 1));
    }
  }
  return [...out];
}

describe('isDateTime', () => {
  it('decides every variant of a timestamp exactly as ajv-formats does', () => {
    const texts = variants();
    expect(texts.length).toBeGreaterThan(3000);
    const disagreements = texts.filter((text) => isDateTime(text) !== reference(text));
    expect(disagreements).toEqual([]);
    // Both answers occur, so the comparison covered accepted and refused shapes alike.
    expect(texts.some(isDateTime)).toBe(true);
    expect(texts.some((text) => !isDateTime(text))).toBe(true);
  });

  it('makes task validation refuse a date that does not exist and accept a leap second', () => {
    const task = createTask(createMessage('hi'));
    expect(() => validateTask({ ...task, created_at: '2023-02-29T12:00:00Z' })).toThrow(/created_at/);
    expect(() => validateTask({ ...task, created_at: '2024-02-29T23:59:60Z' })).not.toThrow();
  });
});
