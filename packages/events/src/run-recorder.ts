/**
 * RunRecorder: collects a run's events and turns them into a RunReport. It is an EventSink too, so
 * it can sit directly in a runtime's sink slot or behind a FanOutEventSink.
 */
import { ValueError, type JsonObject, type TaskEvent } from '@agent/core';
import { checkOptionNames, numberOption, optionNames, snapshot } from '@agent/core/internal';
import { SequencedEventSink } from './event-sink.js';
import { ReportFold } from './report-builder.js';
import { runIdsOf, type RunContextInput } from './run-context.js';
import { RunEvent, type FromTaskEventOptions } from './run-event.js';
import { adoptListedRunReport, type RunReport } from './run-report.js';

/** How many streamed events a report lists unless `maxStreamedEvents` says otherwise. */
export const DEFAULT_MAX_STREAMED_EVENTS = 1000;

export interface RunRecorderOptions {
  /** Used for events that name no agent. */
  agentName?: string;
  /** The run's context; ids on the events themselves take precedence. */
  context?: RunContextInput | null;
  /**
   * How many events of the streamed types (`task.artifact`, `llm.stream`, `task.progress`) the
   * report lists: later ones are still folded into its artifacts, final task and metrics, and
   * counted in `dropped_events`. Every other event is always listed. A non-negative integer, or
   * `Infinity` to list everything. Default 1000.
   */
  maxStreamedEvents?: number;
}

const OPTION_NAMES = optionNames<RunRecorderOptions>({
  agentName: true,
  context: true,
  maxStreamedEvents: true,
});

export interface ToReportOptions {
  /** Application data stored with the report (redacted with it). Default `{}`. */
  metadata?: JsonObject;
}

/** Reads `maxStreamedEvents`, or an option of that meaning named `name`: a non-negative integer or `Infinity`. */
export function maxStreamedEventsOf(value: unknown, name = 'maxStreamedEvents'): number {
  if (value === Infinity) return value;
  if (value !== undefined && typeof value !== 'number')
    throw new ValueError(`${name} must be a non-negative integer or Infinity, got ${String(value)}`);
  return numberOption(name, value, DEFAULT_MAX_STREAMED_EVENTS, { min: 0, integer: true });
}

/** Set by RunRecorder's static block: {@link recordTaskEventOnly} needs the recorder's private state. */
let recordOnly: (recorder: RunRecorder, taskEvent: TaskEvent, options: FromTaskEventOptions) => void;

/**
 * `recorder.recordTaskEvent(taskEvent, options)` for a caller that never reads the RunEvent it
 * returns (the runtime). No one else can reach the event built from `taskEvent`, so the recorder
 * keeps it as its own instead of copying it again: one deep copy per event instead of two. The
 * event built still copies what it takes from `taskEvent`, so `taskEvent` stays the caller's.
 */
export function recordTaskEventOnly(
  recorder: RunRecorder,
  taskEvent: TaskEvent,
  options: FromTaskEventOptions = {},
): void {
  recordOnly(recorder, taskEvent, options);
}

export class RunRecorder extends SequencedEventSink {
  /** Folds each event in as it is recorded: the report of a long run is not built from a list at the end. */
  readonly #fold: ReportFold;
  readonly #defaults: FromTaskEventOptions;
  /** True while {@link recordTaskEventOnly} emits: `store` then gets an event nobody else holds. */
  #handedOver = false;

  static {
    recordOnly = (recorder, taskEvent, options) => {
      const event = recorder.#fromTaskEvent(taskEvent, options);
      recorder.#handedOver = true;
      try {
        recorder.emitOwn(event);
      } finally {
        recorder.#handedOver = false;
      }
    };
  }

  constructor(options: RunRecorderOptions = {}) {
    super();
    checkOptionNames('RunRecorder', options, OPTION_NAMES);
    this.#defaults = { agentName: options.agentName, context: options.context ?? null };
    this.#fold = new ReportFold({ maxStreamedEvents: maxStreamedEventsOf(options.maxStreamedEvents) });
  }

  /** Normalizes and keeps a task event; the recorder numbers it. */
  recordTaskEvent(taskEvent: TaskEvent, options: FromTaskEventOptions = {}): RunEvent {
    return this.emit(this.#fromTaskEvent(taskEvent, options));
  }

  #fromTaskEvent(taskEvent: TaskEvent, options: FromTaskEventOptions): RunEvent {
    return RunEvent.fromTaskEvent(taskEvent, {
      context: options.context ?? this.#defaults.context,
      agentName: options.agentName ?? this.#defaults.agentName,
    });
  }

  override emitTaskEvent(taskEvent: TaskEvent, options?: FromTaskEventOptions): RunEvent {
    return this.recordTaskEvent(taskEvent, options);
  }

  /**
   * Keeps a validated deep copy of an event and numbers it here, whatever `sequence` it carried:
   * by design `sequence` is the numbering of the sink that holds the event (1 for its first), so
   * keeping another sink's numbers would let the report's sequences repeat or run backwards. The input is not
   * mutated. @throws ValueError when `event` is not a RunEvent.
   */
  recordEvent(event: RunEvent): RunEvent {
    return this.emit(RunEvent.parse(event));
  }

  protected store(event: RunEvent): void {
    // A handed-over event was built by fromTaskEvent for this recorder alone and numbered in place:
    // it is still exactly the envelope of its payload, which is all the fold needs to keep of it.
    if (this.#handedOver) this.#fold.adoptEnvelope(event);
    else this.#fold.add(event);
  }

  /**
   * Copies of the events the report lists, in arrival order: every event recorded so far except the
   * streamed ones past `maxStreamedEvents`.
   */
  get events(): RunEvent[] {
    return snapshot(this.#fold.events);
  }

  /** Streamed events recorded past `maxStreamedEvents`: folded in, not listed. */
  get droppedEvents(): number {
    return this.#fold.dropped;
  }

  toReport(options: ToReportOptions = {}): RunReport {
    const context = runIdsOf(this.#defaults.context ?? null);
    const defaults = { ...context, agent_name: this.#defaults.agentName ?? context.agent_name };
    // What the fold builds is fresh or never changed again: the report keeps it without a copy,
    // and its events as the fold keeps them until someone reads them.
    const { data, listed } = this.#fold.buildListed({ metadata: options.metadata, defaults });
    return adoptListedRunReport(data, listed);
  }
}
