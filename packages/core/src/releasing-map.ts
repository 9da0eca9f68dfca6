/**
 * A Map for entries that come and go once per request or task in a table that lives as long as the
 * process: running tasks by key, in-flight calls. Each value sits in a cell of its own, emptied when
 * the entry is deleted.
 *
 * Why: V8 replaces a Map's hash table when it grows, shrinks or fills up with deleted entries, and
 * leaves the replaced table with the entries it held. A long-lived Map's table soon sits in the old
 * generation; once replaced it is garbage, but young-generation collections do not know that and
 * keep everything its stale entries point to. A server adding and deleting a task per request then
 * carried each finished task's whole object graph (its copies, its events, its recorder) into the
 * old generation, and paid to copy it there. With a cell per value, a stale entry holds an empty
 * cell and the task dies young.
 */
export class ReleasingMap<K, V> implements Iterable<[K, V]> {
  readonly #cells = new Map<K, { value: V | undefined }>();

  get size(): number {
    return this.#cells.size;
  }

  get(key: K): V | undefined {
    return this.#cells.get(key)?.value;
  }

  has(key: K): boolean {
    return this.#cells.has(key);
  }

  set(key: K, value: V): this {
    const cell = this.#cells.get(key);
    if (cell) cell.value = value;
    else this.#cells.set(key, { value });
    return this;
  }

  delete(key: K): boolean {
    const cell = this.#cells.get(key);
    if (!cell) return false;
    cell.value = undefined;
    return this.#cells.delete(key);
  }

  /** Empties every cell, then the table. */
  clear(): void {
    for (const cell of this.#cells.values()) cell.value = undefined;
    this.#cells.clear();
  }

  keys(): IterableIterator<K> {
    return this.#cells.keys();
  }

  *values(): IterableIterator<V> {
    for (const cell of this.#cells.values()) yield cell.value as V;
  }

  *[Symbol.iterator](): IterableIterator<[K, V]> {
    for (const [key, cell] of this.#cells) yield [key, cell.value as V];
  }
}
