import {
  createArtifact,
  createMessage,
  createTask,
  dataPart,
  isTerminalState,
  messageText,
  parseIsoTimestamp,
  textPart,
} from './index.js';

describe('factories', () => {
  it('fill ids and UTC timestamps', () => {
    const task = createTask('hello');
    expect(task.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(task.created_at).toMatch(/Z$/);
    expect(task.state).toBe('submitted');
    expect(task.messages[0]).toMatchObject({ role: 'user', parts: [{ type: 'text', content: 'hello' }] });
    expect(createTask().id).not.toBe(createTask().id);
  });
  it('take explicit values', () => {
    const message = createMessage('m', { id: 'm1', role: 'agent' });
    const task = createTask(message, { id: 't1', metadata: { a: 1 } });
    expect(task).toMatchObject({ id: 't1', metadata: { a: 1 }, messages: [message] });
    expect(createTask({ id: 't2', state: 'working' })).toMatchObject({ id: 't2', state: 'working' });
  });
  it('build parts: JSON content becomes a data part', () => {
    expect(textPart('a')).toEqual({ type: 'text', content: 'a' });
    expect(dataPart({ a: 1 })).toEqual({ type: 'data', content: { a: 1 } });
  });
  it('build artifacts with the runtime descriptor', () => {
    const artifact = createArtifact('x', { kind: 'preview', action_id: 'a1' });
    expect(artifact).toMatchObject({
      parts: [{ type: 'text', content: 'x' }],
      metadata: {},
      kind: 'preview',
      action_id: 'a1',
    });
    expect('uri' in artifact).toBe(false);
  });
  it('read message text', () => {
    expect(messageText(createMessage([textPart('a'), dataPart(1), textPart('b')]))).toBe('a\nb');
    expect(messageText(undefined)).toBe('');
  });
  it('know terminal states', () => {
    expect(isTerminalState('completed')).toBe(true);
    expect(isTerminalState('working')).toBe(false);
  });
  it('parse ISO timestamps strictly', () => {
    expect(parseIsoTimestamp('2026-01-01T00:00:00Z')?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(parseIsoTimestamp('2026-01-01T00:00:00+02:00')?.toISOString()).toBe('2025-12-31T22:00:00.000Z');
    expect(parseIsoTimestamp('2026-01-01T00:00:00')).toBeNull();
    expect(parseIsoTimestamp('not a date')).toBeUndefined();
  });
});

describe('parseIsoTimestamp is strict', () => {
  it('rejects impossible dates and times instead of rolling them over', () => {
    expect(parseIsoTimestamp('2026-02-30T00:00:00Z')).toBeUndefined();
    expect(parseIsoTimestamp('2026-01-01T25:00:00Z')).toBeUndefined();
    expect(parseIsoTimestamp('2026-01-01T00:00:00Zjunk')).toBeUndefined();
    expect(parseIsoTimestamp('2024-02-29T00:00:00Z')?.toISOString()).toBe('2024-02-29T00:00:00.000Z');
  });
  it('accepts a space separator and fractional seconds', () => {
    expect(parseIsoTimestamp('2026-01-01 01:00:00.5+01:00')?.toISOString()).toBe('2026-01-01T00:00:00.500Z');
    expect(parseIsoTimestamp('2026-01-01')).toBeNull();
  });
});
