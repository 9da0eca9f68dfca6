import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValueError } from '@agent/core';
import {
  assertRunEvents,
  ContextManifest,
  RunEvent,
  FanOutEventSink,
  InMemoryEventSink,
  InMemoryRegistryStore,
  InMemoryRunStore,
  JsonlEventSink,
  LocalTraceTelemetry,
  OpenTelemetryBridge,
  RedactionPolicy,
  RunRecorder,
  SqliteRegistryStore,
  SqliteRunStore,
  StreamingEventSink,
} from './index.js';

// Each constructor names the unknown option and lists the accepted ones (one rule for all).
const cases: [string, () => unknown, string][] = [
  ['RunRecorder', () => new RunRecorder({ agent: 'a' } as never), 'agentName, context, maxStreamedEvents'],
  [
    'RedactionPolicy',
    () => new RedactionPolicy({ extraKeys: ['pin'] } as never),
    'allowKeys, includeDefaults, keys, mask, patterns',
  ],
  [
    'InMemoryRunStore',
    () => new InMemoryRunStore({ redaction: null } as never),
    'compressAboveBytes, maxBytes, maxTasks, now, redactionPolicy, taskRetentionMs',
  ],
  [
    'SqliteRunStore',
    () => new SqliteRunStore({ path: ':memory:', timeoutMs: 5 } as never),
    'backgroundCheckpoints, busyTimeoutMs, now, path, readonly, redactionPolicy, taskRetentionMs',
  ],
  ['InMemoryRegistryStore', () => new InMemoryRegistryStore({ clock: Date.now } as never), 'now'],
  [
    'SqliteRegistryStore',
    () => new SqliteRegistryStore({ path: ':memory:', readonly: true } as never),
    'busyTimeoutMs, now, path',
  ],
  ['InMemoryEventSink', () => new InMemoryEventSink({ max: 5 } as never), 'maxEvents'],
  ['FanOutEventSink', () => new FanOutEventSink([], { onErr: () => {} } as never), 'maxErrors, onError'],
  ['StreamingEventSink', () => new StreamingEventSink({ size: 5 } as never), 'bufferSize'],
  [
    'JsonlEventSink',
    () => new JsonlEventSink({ path: 'unused.jsonl', file: 'x' } as never),
    'path, redactionPolicy',
  ],
  [
    'LocalTraceTelemetry',
    () => new LocalTraceTelemetry({ maxSpan: 5 } as never),
    'listeners, maxSpans, newSpanId, redactionPolicy',
  ],
  [
    'OpenTelemetryBridge',
    () => new OpenTelemetryBridge({ name: 'x' } as never),
    'maxOpenSpans, tracer, tracerName',
  ],
];

describe('unknown option names are a ValueError naming the accepted ones', () => {
  it.each(cases)('%s', (owner, build, accepted) => {
    let error: unknown;
    try {
      build();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValueError);
    expect((error as Error).message).toMatch(
      new RegExp(`^${owner} does not accept the option "\\w+"; accepted: ${accepted}$`),
    );
  });

  it('ContextManifest refuses an unknown init field', () => {
    const init = {
      runId: 'r',
      agentName: 'a',
      provider: 'p',
      model: 'm',
      systemTokens: 0,
      toolPromptTokens: 0,
      historyTokens: 0,
      userTokens: 0,
    };
    expect(() => new ContextManifest({ ...init, window: 5 } as never)).toThrow(
      /ContextManifest does not accept the option "window"/,
    );
    expect(ContextManifest.fromDict(new ContextManifest(init).toDict()).toDict()).toEqual(
      new ContextManifest(init).toDict(),
    );
  });

  it('RunEvent.fromTaskEvent and assertRunEvents', () => {
    const event = {
      type: 'task.status',
      task_id: 't',
      state: 'working',
      final: false,
      timestamp: '2026-01-01T00:00:00Z',
    };
    expect(() => RunEvent.fromTaskEvent(event as never, { agent: 'a' } as never)).toThrow(
      'RunEvent.fromTaskEvent does not accept the option "agent"; accepted: agentName, context',
    );
    expect(() => assertRunEvents([], [], { match: 'exact' } as never)).toThrow(
      'assertRunEvents does not accept the option "match"; accepted: mode',
    );
  });

  it('every accepted option still constructs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'events-options-'));
    try {
      const policy = new RedactionPolicy({
        keys: ['pin'],
        patterns: [/x/g],
        includeDefaults: true,
        allowKeys: [],
        mask: '*',
      });
      const sink = new JsonlEventSink({ path: join(dir, 'e.jsonl'), redactionPolicy: policy });
      const store = new SqliteRunStore({
        path: ':memory:',
        busyTimeoutMs: 10,
        readonly: false,
        redactionPolicy: null,
      });
      const registry = new SqliteRegistryStore({ path: ':memory:', busyTimeoutMs: 10, now: Date.now });
      expect([
        sink,
        store,
        registry,
        new InMemoryRegistryStore({ now: Date.now }),
        new RunRecorder({ agentName: 'a', context: null, maxStreamedEvents: 10 }),
      ]).toHaveLength(5);
      registry.close();
      store.close();
      sink.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
