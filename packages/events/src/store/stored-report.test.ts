import { ValueError, type TaskEvent } from '@agent/core';
import { RedactionPolicy } from '../redaction.js';
import { recordTaskEventOnly, RunRecorder } from '../run-recorder.js';
import { RunEvent } from '../run-event.js';
import { RunReport, type RunReportData } from '../run-report.js';
import { completedRun, runContext } from '../test-support/fixtures.js';
import { reportTextRowOf } from './records.js';
import { reportOfStoredText } from './stored-report.js';

/** A report of a whole run (status, context, model calls, an approved action, progress, artifact, final). */
function recordedReport(): RunReport {
  const context = runContext({ run_id: 'run-stored' });
  const recorder = new RunRecorder({ context });
  for (const event of completedRun('task-stored', context).events) recorder.recordTaskEvent(event);
  return recorder.toReport({ metadata: { note: 'kept' } });
}

function storedText(report: RunReport, policy: RedactionPolicy | null = null): string {
  return reportTextRowOf(report, policy).report;
}

type StoredEvent = Record<string, unknown>;

describe('the stored form of a run report', () => {
  it('keeps each recorded event as its payload and sequence, the final task once, and reads back the same report', () => {
    const report = recordedReport();
    const text = storedText(report);
    const stored = JSON.parse(text) as { form: string; events: StoredEvent[]; final_task_event?: number };
    expect(stored.form).toBe('compact');
    expect(stored.events).toHaveLength(report.eventCount);
    for (const event of stored.events) expect(Object.keys(event).sort()).toEqual(['payload', 'sequence']);
    expect(stored).not.toHaveProperty('final_task');
    expect(stored.final_task_event).toBe(report.eventCount - 1);
    expect(report.finalTask).not.toBeNull();

    expect(reportOfStoredText(text).toDict({ redactionPolicy: null })).toEqual(
      report.toDict({ redactionPolicy: null }),
    );
    // What it is for: the text a store writes (and masks in the same pass) is much shorter.
    expect(text.length).toBeLessThan(JSON.stringify(report.toDict({ redactionPolicy: null })).length * 0.6);
  });

  it("writes a runtime's report from its events as recorded, the same text before and after they are read", () => {
    const context = runContext({ run_id: 'run-handed-over' });
    const recorder = new RunRecorder({ context });
    const events = completedRun('task-handed-over', context).events;
    for (const event of events) recordTaskEventOnly(recorder, event);
    const report = recorder.toReport({ metadata: { note: 'kept' } });
    expect(report.eventCount).toBe(events.length);
    const unread = storedText(report, RedactionPolicy.default());
    const stored = JSON.parse(unread) as { events: StoredEvent[]; final_task_event?: number };
    expect(stored.events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
    for (const event of stored.events) expect(Object.keys(event).sort()).toEqual(['payload', 'sequence']);
    expect(stored.final_task_event).toBe(events.length - 1);

    // Read: the events are made, in their place in the dict, and the report stores the same text.
    const dict = report.toDict({ redactionPolicy: null });
    expect(dict.events).toHaveLength(events.length);
    expect(dict.events[0]).toEqual(expect.objectContaining({ sequence: 1, type: events[0]!.type }));
    const restored = RunReport.fromDict(dict);
    expect(Object.keys(dict)).toEqual(Object.keys(restored.toDict({ redactionPolicy: null })));
    expect(storedText(report, RedactionPolicy.default())).toBe(unread);
    // …and the events of the same report restored from its dict (each compared field by field).
    const events2 = (JSON.parse(storedText(restored, RedactionPolicy.default())) as typeof stored).events;
    expect(JSON.stringify(events2) === JSON.stringify(stored.events)).toBe(true);
    expect(reportOfStoredText(unread).toDict()).toEqual(report.toDict());
  });

  it('masks what the dict masks, and reads back as the masked dict', () => {
    const report = recordedReport();
    const text = storedText(report, RedactionPolicy.default());
    expect(text).not.toContain('sk-live-123');
    expect(text).toContain('[REDACTED]');
    expect(JSON.parse(text)).not.toHaveProperty('final_task');
    expect(JSON.parse(text)).toHaveProperty('final_task_event');
    expect(reportOfStoredText(text).toDict({ redactionPolicy: null })).toEqual(report.toDict());
  });

  it('keeps whole an event whose envelope does not follow from its payload, and a final task no event carries', () => {
    const data = recordedReport().toDict({ redactionPolicy: null });
    const changed = {
      ...data,
      events: data.events.map((event, index) =>
        index === 1
          ? { ...event, summary: 'a summary of its own' }
          : index === 2
            ? { ...event, severity: 'warning' as const }
            : event,
      ),
      final_task: { ...data.final_task!, metadata: { rewritten: true } },
    } as RunReportData;
    const report = RunReport.fromDict(changed);
    const text = storedText(report);
    const stored = JSON.parse(text) as {
      events: StoredEvent[];
      final_task?: unknown;
      final_task_event?: number;
    };
    expect(stored.events[1]).toHaveProperty('version', '1.0');
    expect(stored.events[1]).toHaveProperty('summary', 'a summary of its own');
    expect(stored.events[2]).toHaveProperty('severity', 'warning');
    expect(stored.events[0]).not.toHaveProperty('version');
    expect(stored).not.toHaveProperty('final_task_event');
    expect(stored.final_task).toEqual(changed.final_task);
    expect(reportOfStoredText(text).toDict({ redactionPolicy: null })).toEqual(
      report.toDict({ redactionPolicy: null }),
    );
  });

  it('stores the events a runtime handed over as payloads, beside events recorded whole, and reads them back', () => {
    const context = runContext({ run_id: 'run-handed' });
    const run = completedRun('task-handed', context);
    const recorder = new RunRecorder({ context });
    const [first, ...rest] = run.events;
    recordTaskEventOnly(recorder, first!);
    // An event of the recorder's own making that is not its payload's envelope stays whole.
    const own = RunEvent.fromTaskEvent(rest[0]!, { context });
    recorder.recordEvent({ ...own, summary: 'said otherwise' });
    for (const event of rest.slice(1)) recordTaskEventOnly(recorder, event);
    const report = recorder.toReport();

    const text = storedText(report);
    const stored = JSON.parse(text) as { events: StoredEvent[]; final_task_event?: number };
    expect(stored.events.map((event) => event.sequence)).toEqual(run.events.map((_, index) => index + 1));
    expect(stored.events[1]).toHaveProperty('summary', 'said otherwise');
    for (const [index, event] of stored.events.entries())
      if (index !== 1) expect(Object.keys(event).sort()).toEqual(['payload', 'sequence']);
    expect(stored.final_task_event).toBe(run.events.length - 1);
    expect(reportOfStoredText(text).toDict({ redactionPolicy: null })).toEqual(
      report.toDict({ redactionPolicy: null }),
    );

    // The events a report hands out are copies: changing them changes neither the report nor its text.
    for (const event of report.events) (event as { summary: string | null }).summary = 'changed';
    for (const event of recorder.events) (event as { summary: string | null }).summary = 'changed';
    expect(storedText(report)).toBe(text);
    // A report built again differs only in when it was built.
    const built = (stored: string) => stored.replace(/"created_at":"[^"]*"/, '"created_at":""');
    expect(built(storedText(recorder.toReport()))).toBe(built(text));
  });

  it('stores a report without events or final task as it is, plus its form', () => {
    const report = new RunRecorder({ context: runContext({ run_id: 'run-empty' }) }).toReport();
    const text = storedText(report);
    expect(JSON.parse(text)).toMatchObject({ form: 'compact', events: [], final_task: null });
    expect(reportOfStoredText(text).toDict({ redactionPolicy: null })).toEqual(
      report.toDict({ redactionPolicy: null }),
    );
  });

  it('reads a report stored as its plain dict, as stores wrote them before', () => {
    const report = recordedReport();
    const plain = JSON.stringify(report.toDict());
    expect(reportOfStoredText(plain).toDict({ redactionPolicy: null })).toEqual(report.toDict());
  });

  it('refuses a stored report it cannot expand with a ValueError naming the field', () => {
    const stored = JSON.parse(storedText(recordedReport())) as Record<string, unknown> & {
      events: StoredEvent[];
    };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...stored, events: [{ sequence: 1 }] }, 'events[0]'],
      [
        { ...stored, events: [{ sequence: 1, payload: { type: 'no.such.type', task_id: 't' } }] },
        'events[0]',
      ],
      [{ ...stored, events: [{ payload: stored.events[0]!.payload }] }, 'events[0]'],
      [{ ...stored, events: 'none' }, 'events'],
      [{ ...stored, final_task_event: 99 }, 'final_task_event'],
      [{ ...stored, final_task_event: 0 }, 'final_task_event'],
    ];
    for (const [value, field] of cases) {
      let error: unknown;
      try {
        reportOfStoredText(JSON.stringify(value));
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ValueError);
      expect((error as ValueError).data).toEqual({ field });
    }
  });

  it('keeps every streamed event it lists, and the count of those it dropped', () => {
    const context = runContext({ run_id: 'run-streamed' });
    const recorder = new RunRecorder({ context, maxStreamedEvents: 3 });
    for (let i = 0; i < 10; i += 1)
      recorder.recordTaskEvent({
        type: 'task.progress',
        task_id: 'task-streamed',
        message: `step ${i}`,
        progress: i / 10,
      } as unknown as TaskEvent);
    const report = recorder.toReport();
    const back = reportOfStoredText(storedText(report));
    expect(back.eventCount).toBe(3);
    expect(back.droppedEvents).toBe(7);
    expect(back.toDict({ redactionPolicy: null })).toEqual(report.toDict({ redactionPolicy: null }));
  });
});
