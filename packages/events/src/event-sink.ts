/**
 * Event sinks: where RunEvents go. By design a sink only observes: it never authorizes anything.
 */
import { AgentError, ValueError, type TaskEvent } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';
import { RunEvent, type FromTaskEventOptions } from './run-event.js';

/**
 * Consumes RunEvents. Both methods are synchronous, so numbering cannot interleave: the sink
 * assigns `sequence` (1, 2, 3… without gaps) and returns the stored event.
 */
export interface EventSink {
  emit(event: RunEvent): RunEvent;
  emitTaskEvent(taskEvent: TaskEvent, options?: FromTaskEventOptions): RunEvent;
}

/**
 * Numbering shared by every sink implementation: the first event gets 1, and an event is numbered
 * only once it has been accepted, so a rejected event leaves no gap.
 */
export abstract class SequencedEventSink implements EventSink {
  #next = 1;

  emit(event: RunEvent): RunEvent {
    if (!RunEvent.is(event)) {
      throw new ValueError('EventSink.emit needs a RunEvent (build one with RunEvent.fromTaskEvent)');
    }
    return this.emitOwn({ ...event });
  }

  /**
   * Numbers an event this sink alone holds in place, and stores it: what `emit` does with its copy,
   * and what a sink does directly with an event built for it by `RunEvent.fromTaskEvent`, which
   * needs neither the check nor a copy (one per tick of every running task, each kept for a report).
   */
  protected emitOwn(event: RunEvent): RunEvent {
    event.sequence = this.#next;
    this.store(event);
    this.#next += 1;
    return event;
  }

  emitTaskEvent(taskEvent: TaskEvent, options?: FromTaskEventOptions): RunEvent {
    return this.emit(RunEvent.fromTaskEvent(taskEvent, options));
  }

  /** The sequence number the next accepted event gets. */
  get nextSequence(): number {
    return this.#next;
  }

  /** Keeps or forwards an already numbered event; throwing rejects it without using its number. */
  protected abstract store(event: RunEvent): void;
}

export interface InMemoryEventSinkOptions {
  /**
   * Most events kept; older ones are dropped first while numbering continues. Default: unbounded.
   */
  maxEvents?: number;
}

/** Keeps events in memory; `toList()` returns them in sequence order. */
export class InMemoryEventSink extends SequencedEventSink {
  readonly #events: RunEvent[] = [];
  readonly #max: number;

  constructor(options: InMemoryEventSinkOptions = {}) {
    super();
    checkOptionNames(
      'InMemoryEventSink',
      options,
      optionNames<InMemoryEventSinkOptions>({ maxEvents: true }),
    );
    const max = options.maxEvents ?? Number.POSITIVE_INFINITY;
    if (!(max === Number.POSITIVE_INFINITY || (Number.isInteger(max) && max > 0))) {
      throw new ValueError(
        `InMemoryEventSink.maxEvents must be a positive integer, got ${String(options.maxEvents)}`,
      );
    }
    this.#max = max;
  }

  protected store(event: RunEvent): void {
    this.#events.push(event);
    if (this.#events.length > this.#max) this.#events.shift();
  }

  /** A copy of the kept events, oldest first. */
  toList(): RunEvent[] {
    return [...this.#events];
  }

  get size(): number {
    return this.#events.length;
  }

  /** Drops kept events; numbering continues. */
  clear(): void {
    this.#events.length = 0;
  }
}

/** Receives what a sink threw, with the event it was given. */
export type SinkErrorHandler = (error: AgentError, event: RunEvent) => void;

export interface FanOutEventSinkOptions {
  /** Called for every error a target throws. Default: errors are only kept in `errors`. */
  onError?: SinkErrorHandler;
  /** Most errors kept in `errors`. Default 100. */
  maxErrors?: number;
}

const FAN_OUT_OPTION_NAMES = optionNames<FanOutEventSinkOptions>({ onError: true, maxErrors: true });

/**
 * Numbers events once and forwards them to several sinks, isolating each: a target that throws is
 * recorded and reported, never propagated, so an observer cannot change a run's outcome.
 */
export class FanOutEventSink extends SequencedEventSink {
  readonly #targets: ((event: RunEvent) => void)[];
  readonly #onError: SinkErrorHandler | undefined;
  readonly #maxErrors: number;
  readonly #errors: { error: AgentError; event: RunEvent }[] = [];

  constructor(targets: (EventSink | ((event: RunEvent) => void))[], options: FanOutEventSinkOptions = {}) {
    super();
    checkOptionNames('FanOutEventSink', options, FAN_OUT_OPTION_NAMES);
    this.#targets = targets.map((target) =>
      typeof target === 'function' ? target : (event) => void target.emit(event),
    );
    this.#onError = options.onError;
    this.#maxErrors = options.maxErrors ?? 100;
  }

  protected store(event: RunEvent): void {
    for (const target of this.#targets) {
      try {
        target(event);
      } catch (error) {
        this.#report(AgentError.from(error), event);
      }
    }
  }

  #report(error: AgentError, event: RunEvent): void {
    this.#errors.push({ error, event });
    if (this.#errors.length > this.#maxErrors) this.#errors.shift();
    try {
      this.#onError?.(error, event);
    } catch {
      // The error reporter is an observer too; its failure is deliberately swallowed.
    }
  }

  /** Errors targets threw, oldest first. */
  get errors(): readonly { error: AgentError; event: RunEvent }[] {
    return [...this.#errors];
  }
}

/**
 * Calls `sink.emit` and never throws: on failure it reports the error and returns the unnumbered
 * event. This is the guard the runtime puts around every sink call.
 */
export function safeEmit(sink: EventSink, event: RunEvent, onError?: SinkErrorHandler): RunEvent {
  try {
    return sink.emit(event);
  } catch (error) {
    try {
      onError?.(AgentError.from(error), event);
    } catch {
      // See FanOutEventSink: reporting must not fail the run either.
    }
    return event;
  }
}
