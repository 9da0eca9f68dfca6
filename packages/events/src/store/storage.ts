/**
 * Storage: the generic key/value interface for agent state, kept apart from the run store by
 * design. Values are JSON; every method is async so a networked backend fits the same shape.
 */
import { UnavailableError, ValueError, type JsonValue } from '@agent/core';
import { snapshot } from '@agent/core/internal';

export interface Storage {
  /** `null` for a missing key. */
  get(key: string): Promise<JsonValue | null>;
  set(key: string, value: JsonValue): Promise<void>;
  /** True when the key existed. */
  delete(key: string): Promise<boolean>;
  /** Keys starting with `prefix` (all keys without one), sorted. */
  keys(prefix?: string): Promise<string[]>;
  close(): Promise<void> | void;
}

function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key === '')
    throw new ValueError('Storage keys must be non-empty strings', { data: { field: 'key' } });
  return key;
}

/** Storage in process memory. Values are copied in and out, so callers cannot alias stored state. */
export class InMemoryStorage implements Storage {
  // A Map, not an object: keys such as `__proto__` must stay ordinary keys.
  readonly #values = new Map<string, JsonValue>();
  #closed = false;

  #open(): void {
    if (this.#closed) throw new UnavailableError('The storage is closed');
  }

  async get(key: string): Promise<JsonValue | null> {
    this.#open();
    const value = this.#values.get(checkKey(key));
    return value === undefined ? null : snapshot(value);
  }

  async set(key: string, value: JsonValue): Promise<void> {
    this.#open();
    checkKey(key);
    if (value === undefined)
      throw new ValueError('Storage values must be JSON (not undefined)', { data: { field: 'value' } });
    this.#values.set(key, JSON.parse(JSON.stringify(value)) as JsonValue);
  }

  async delete(key: string): Promise<boolean> {
    this.#open();
    return this.#values.delete(checkKey(key));
  }

  async keys(prefix = ''): Promise<string[]> {
    this.#open();
    return [...this.#values.keys()].filter((key) => key.startsWith(prefix)).sort();
  }

  close(): void {
    this.#closed = true;
    this.#values.clear();
  }
}
