/**
 * RunRecorder: collects a run's events and turns them into a RunReport. It is an EventSink too, so
 * it can sit directly in a runtime's sink slot or behind a FanOutEventSink.
 */
import { type JsonObject, type TaskEvent } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';
import { SequencedEventSink } from './event-sink.js';
import { buildReportData } from './report-builder.js';
import { runIdsOf, type RunContextInput } from './run-context.js';
import { RunEvent, type FromTaskEventOptions } from './run-event.js';
import { adoptRunReport, type RunReport } from './run-report.js';

export interface RunRecorderOptions {
  /** Used for events that name no agent. */
  agentName?: string;
  /** The run's context; ids on the events themselves take precedence. */
  context?: RunContextInput | null;
}

const OPTION_NAMES = optionNames<RunRecorderOptions>({ agentName: true, context: true });

export interface ToReportOptions {
  /** Application data stored with the report (redacted with it). Default `{}`. */
  metadata?: JsonObject;
}

export class RunRecorder extends SequencedEventSink {
  readonly #events: RunEvent[] = [];
  readonly #defaults: FromTaskEventOptions;

  constructor(options: RunRecorderOptions = {}) {
    super();
    checkOptionNames('RunRecorder', options, OPTION_NAMES);
    this.#defaults = { agentName: options.agentName, context: options.context ?? null };
  }

  /** Normalizes and keeps a task event; the recorder numbers it. */
  recordTaskEvent(taskEvent: TaskEvent, options: FromTaskEventOptions = {}): RunEvent {
    return this.emit(
      RunEvent.fromTaskEvent(taskEvent, {
        context: options.context ?? this.#defaults.context,
        agentName: options.agentName ?? this.#defaults.agentName,
      }),
    );
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
    this.#events.push(event);
  }

  /** Events recorded so far, in arrival order. */
  get events(): RunEvent[] {
    return [...this.#events];
  }

  toReport(options: ToReportOptions = {}): RunReport {
    const context = runIdsOf(this.#defaults.context ?? null);
    const defaults = { ...context, agent_name: this.#defaults.agentName ?? context.agent_name };
    // The builder's output is fresh and shared with nothing: the report keeps it without a copy.
    return adoptRunReport(buildReportData(this.#events, { metadata: options.metadata, defaults }));
  }
}
