import {
  createArtifact,
  createMessage,
  createTask,
  dataPart,
  isTerminalState,
  messageText,
  parseIsoTimestamp,
  textPart,
  ValueError,
  createJsonLogger,
  handlerFromFunction,
} from './index.js';

describe('factories', () => {
  it('fill ids and UTC timestamps', () => {
    const task = createTask('hello');
    // A UUID v7, so that a store's index of task ids grows at its end.
    expect(task.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(task.id.replace(/-/g, '').slice(0, 12), 16)).toBeGreaterThan(Date.now() - 60_000);
    expect(task.messages[0]!.id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
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
    expect(messageText(null)).toBe('');
  });
  it('read a task as its last message', () => {
    const task = createTask('question');
    expect(messageText(task)).toBe('question');
    task.messages.push(createMessage([textPart('answer'), textPart('more')], { role: 'agent' }));
    expect(messageText(task)).toBe('answer\nmore');
    expect(messageText(createTask())).toBe('');
  });
  it('refuse what is neither a message nor a task', () => {
    expect(() => messageText('text' as never)).toThrow(ValueError);
    expect(() => messageText({ id: 'x' } as never)).toThrow('messageText needs a Message or a Task');
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

describe('factories refuse unknown option names', () => {
  it('name the unknown option and the accepted ones', () => {
    expect(() => createMessage('m', { roles: 'agent' } as never)).toThrow(
      'createMessage does not accept the option "roles"; accepted: id, role, timestamp',
    );
    expect(() => createTask('t', { meta: {} } as never)).toThrow(ValueError);
    expect(() => createTask({ createdAt: 'x' } as never)).toThrow(
      /createTask does not accept the option "createdAt"/,
    );
    expect(() => createArtifact('a', { mediaType: 'text/plain' } as never)).toThrow(
      /createArtifact does not accept the option "mediaType"; accepted: action_id, created_at, id, kind, media_type/,
    );
    expect(() => createJsonLogger({ lvl: 'debug' } as never)).toThrow(/accepted: level, write/);
    expect(() => handlerFromFunction(async (task) => task, { name: 'x' } as never)).toThrow(/accepted: card/);
  });
  it('still take a whole task as the options of createTask', () => {
    const task = createTask('x', { id: 't1' });
    expect(createTask(task)).toEqual(task);
  });
});
