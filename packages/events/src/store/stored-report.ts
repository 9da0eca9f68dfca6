/**
 * The form a run report takes in a store. A report's dict repeats itself: each of its events
 * carries a twenty-field envelope that follows from the event's payload, and its final task is
 * most often the task of its final event. Stored, an event whose envelope is exactly what its
 * payload gives is kept as `{ sequence, payload }`, and such a final task as the index of that
 * event; reading expands both back. The stored text of an echo run is half the size of the dict's,
 * which is time saved in the redaction pass that writes it and pages saved in a database file.
 * Reports stored as their plain dict (before this form existed) read as they always did.
 */
import { ValueError } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import {
  envelopeOf,
  isEnvelopeOf,
  isRunEventType,
  type BasePayload,
  type ListedEvents,
  type RunEvent,
} from '../run-event.js';
import { RunReport, type RunReportData } from '../run-report.js';

/** The value of a stored report's `form`; a report without one was stored as its dict. */
const COMPACT = 'compact';

/** An event as a stored report keeps it: whole, or its payload and sequence. */
type StoredEvent = RunEvent | { sequence: number; payload: BasePayload };

/**
 * What a store writes of a report's data (then masked and serialized): shallow, sharing the data's
 * own objects, to be serialized at once. With `listed`, the report's events are those of the
 * listing (`data.events` only stands in their place), written from it without making them.
 */
export function storedReportOf(
  data: RunReportData,
  listed: ListedEvents | null = null,
): Record<string, unknown> {
  let events: StoredEvent[];
  if (listed !== null)
    events = listed.entries.map((entry, index) => storedListedEvent(entry, listed.sequences[index]!));
  else if (Array.isArray(data.events)) events = data.events.map(storedEvent);
  else return data as unknown as Record<string, unknown>;
  const finalTask = data.final_task;
  const from = finalTask === null || finalTask === undefined ? -1 : finalTaskEventOf(events, finalTask);
  // Every field by name, in the dict's order: what `RunReport.fromDict` reads back, built in one
  // literal (a rest pattern or a key-by-key copy took V8's slow paths).
  return {
    form: COMPACT,
    version: data.version,
    run_id: data.run_id,
    task_id: data.task_id,
    session_id: data.session_id,
    trace_id: data.trace_id,
    agent_name: data.agent_name,
    status: data.status,
    started_at: data.started_at,
    ended_at: data.ended_at,
    duration_seconds: data.duration_seconds,
    created_at: data.created_at,
    events,
    dropped_events: data.dropped_events,
    context_manifests: data.context_manifests,
    actions: data.actions,
    approvals: data.approvals,
    artifacts: data.artifacts,
    llm_metrics: data.llm_metrics,
    budget_events: data.budget_events,
    errors: data.errors,
    final_task: from === -1 ? finalTask : undefined,
    final_task_event: from === -1 ? undefined : from,
    metadata: data.metadata,
  };
}

function storedEvent(event: RunEvent): StoredEvent {
  return isEnvelopeOf(event) ? { sequence: event.sequence, payload: event.payload } : event;
}

/** A listing's entry as stored: a payload kept alone is its envelope's payload already. */
function storedListedEvent(entry: RunEvent | BasePayload, sequence: number): StoredEvent {
  return sequence < 0 ? storedEvent(entry as RunEvent) : { sequence, payload: entry as BasePayload };
}

/** The last event whose payload's task is `task` itself, or -1. */
function finalTaskEventOf(events: readonly StoredEvent[], task: object): number {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const payload = events[index]!.payload as Record<string, unknown>;
    if (payload.task === task) return index;
  }
  return -1;
}

/**
 * The report a store's text holds, in either form.
 * @throws ValueError naming the first malformed field.
 */
export function reportOfStoredText(text: string): RunReport {
  const data: unknown = JSON.parse(text);
  return RunReport.fromDict(isRecord(data) && data.form === COMPACT ? expanded(data) : data);
}

function expanded(data: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(data.events))
    throw new ValueError('RunReport.events must be an array', { data: { field: 'events' } });
  const events = data.events.map((event: unknown, index) => {
    if (!isRecord(event) || 'version' in event) return event;
    const payload = event.payload;
    if (!isRecord(payload) || !isRunEventType(payload.type) || typeof event.sequence !== 'number')
      throw new ValueError(`RunReport.events[${index}] is neither an event nor a payload with its sequence`, {
        data: { field: `events[${index}]` },
      });
    return envelopeOf(payload as BasePayload, event.sequence);
  });
  if (!('final_task_event' in data)) return { ...data, events };
  const from = data.final_task_event;
  const task =
    typeof from === 'number' && Number.isInteger(from) && from >= 0 && from < events.length
      ? (events[from] as { payload?: { task?: unknown } } | undefined)?.payload?.task
      : undefined;
  if (!isRecord(task))
    throw new ValueError('RunReport.final_task_event must name an event that carries a task', {
      data: { field: 'final_task_event' },
    });
  return { ...data, events, final_task: task };
}
