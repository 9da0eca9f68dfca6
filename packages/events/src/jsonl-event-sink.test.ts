import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnavailableError, ValueError, type TaskEvent } from '@agent/core';
import { JsonlEventSink, readJsonlEvents } from './jsonl-event-sink.js';
import { REDACTED } from './redaction.js';
import { RunReplay } from './run-replay.js';
import { completedRun } from './test-support/fixtures.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'jsonl-sink-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('JsonlEventSink', () => {
  it('appends redacted lines that read back into a replay', () => {
    const path = join(dir, 'run.jsonl');
    const sink = new JsonlEventSink({ path });
    const { events, context } = completedRun();
    for (const event of events) sink.emitTaskEvent(event, { context });
    sink.close();
    sink.close();
    const read = readJsonlEvents(path);
    expect(read.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
    expect(new RunReplay(read).eventTypes).toEqual(events.map((e) => e.type));
    const requested = read.find((e) => e.type === 'action.requested')!;
    expect(requested.payload.action).toMatchObject({ payload: { arguments: { api_key: REDACTED } } });
    expect(() => sink.emitTaskEvent(events[0])).toThrow(UnavailableError);
  });

  it('ignores a torn last line and names the line of a bad one', () => {
    const path = join(dir, 'torn.jsonl');
    const sink = new JsonlEventSink({ path, redactionPolicy: null });
    sink.emitTaskEvent({
      type: 'task.progress',
      task_id: 't',
      timestamp: new Date(0).toISOString(),
    } as unknown as TaskEvent);
    sink.close();
    appendFileSync(path, '{"version":"1.0","ty');
    expect(readJsonlEvents(path)).toHaveLength(1);
    writeFileSync(path, '{"version":"1.0"}\n\n');
    expect(() => readJsonlEvents(path)).toThrow(/torn\.jsonl:1: Unknown RunEvent type/);
    writeFileSync(path, 'nope\n{}\n');
    expect(() => readJsonlEvents(path)).toThrow(ValueError);
  });

  it('rejects a bad path with typed errors', () => {
    expect(() => new JsonlEventSink({ path: '' })).toThrow(ValueError);
    expect(() => new JsonlEventSink({ path: join(dir, 'missing', 'dir', 'x.jsonl') })).toThrow(
      UnavailableError,
    );
  });
});
