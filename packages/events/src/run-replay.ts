/**
 * RunReplay: a read-only view over a report's events. It never re-runs tools or model calls; it
 * only lets tests and tools look at what happened.
 */
import { ValueError } from '@agent/core';
import { snapshot } from '@agent/core/internal';
import { isRunEventType, RunEvent, type RunEventOf, type RunEventType } from './run-event.js';
import { RunReport } from './run-report.js';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

export class RunReplay {
  readonly #events: readonly RunEvent[];
  readonly report: RunReport | null;

  /** From a report, a report's dict, or a list of events (ordered by `sequence`). */
  constructor(source: RunReport | readonly RunEvent[] | { events: unknown[] }) {
    let events: RunEvent[];
    if (source instanceof RunReport) {
      this.report = source;
      events = source.events;
    } else if (Array.isArray(source)) {
      this.report = null;
      events = (source as unknown[]).map((event) => RunEvent.parse(event));
    } else if (
      source &&
      typeof source === 'object' &&
      Array.isArray((source as { events?: unknown }).events)
    ) {
      this.report = RunReport.fromDict(source);
      events = this.report.events;
    } else {
      throw new ValueError('RunReplay needs a RunReport, a report dict or an array of RunEvents');
    }
    const ordered = snapshot(events).map((event, index) => ({ event, index }));
    // Sequence decides order; arrival order breaks ties (events recorded from several sinks).
    ordered.sort((a, b) => a.event.sequence - b.event.sequence || a.index - b.index);
    this.#events = deepFreeze(ordered.map((item) => item.event));
  }

  /** Every event's type, in order. */
  get eventTypes(): RunEventType[] {
    return this.#events.map((event) => event.type);
  }

  get length(): number {
    return this.#events.length;
  }

  /** The events in order; each is frozen. */
  *iterEvents(): IterableIterator<RunEvent> {
    yield* this.#events;
  }

  [Symbol.iterator](): IterableIterator<RunEvent> {
    return this.iterEvents();
  }

  /**
   * Events of one type, narrowed to that type.
   * @throws ValueError for a type not in RUN_EVENT_TYPES (a typo would otherwise match nothing).
   */
  findEvents<TType extends RunEventType>(type: TType): RunEventOf<TType>[] {
    if (!isRunEventType(type)) throw new ValueError(`Unknown RunEvent type ${JSON.stringify(type)}`);
    return this.#events.filter((event): event is RunEventOf<TType> => event.type === type);
  }

  /** The first event of a type, or `undefined`. */
  findEvent<TType extends RunEventType>(type: TType): RunEventOf<TType> | undefined {
    return this.findEvents(type)[0];
  }

  /** Events that concern one action (requested through completed, approvals included). */
  actionEvents(actionId: string): RunEvent[] {
    return this.#events.filter((event) => event.action_id === actionId);
  }

  /** The final `task.status`, when the run reached one. */
  get finalEvent(): RunEventOf<'task.status'> | undefined {
    return this.findEvents('task.status').find((event) => event.final);
  }
}
