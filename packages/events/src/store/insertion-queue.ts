/**
 * A keyed queue in insertion order whose oldest entry is found in constant time. A `Map` keeps
 * insertion order too, but V8 leaves a hole for every deleted entry until the table is rebuilt, and
 * iteration walks over the holes: a store that evicts from the front of a 10,000-entry Map and
 * asks for its oldest entry on every call pays for thousands of holes each time.
 */

interface Node<K, V> {
  readonly key: K;
  /** Released when the node dies: a dead node waits in the list until compaction, holding nothing. */
  value: V;
  /** Set when the node dies (deleted, or replaced under its key): no lookup in `#live` tells it. */
  dead: boolean;
}

/** Past this many dead nodes beyond the live ones, the node list is rebuilt. */
const SLACK = 64;

export class InsertionQueue<K, V> {
  /** The live node of each key; a node in `#nodes` that is not here is dead (and marked so). */
  readonly #live = new Map<K, Node<K, V>>();
  /** Nodes in insertion order from `#head` on; everything before `#head` is dead. */
  #nodes: Node<K, V>[] = [];
  #head = 0;

  get size(): number {
    return this.#live.size;
  }

  get(key: K): V | undefined {
    return this.#live.get(key)?.value;
  }

  /** Adds the entry at the end; an entry already under `key` is replaced and moves to the end. */
  set(key: K, value: V): void {
    const node: Node<K, V> = { key, value, dead: false };
    this.#release(this.#live.get(key));
    this.#live.set(key, node);
    this.#nodes.push(node);
    if (this.#nodes.length > 2 * this.#live.size + SLACK) this.#compact();
  }

  delete(key: K): boolean {
    this.#release(this.#live.get(key));
    return this.#live.delete(key);
  }

  /**
   * A dead node stays in `#nodes` until the next compaction (up to as many as are live): it must not
   * keep its value (a stored task, kilobytes of text) alive that long.
   */
  #release(node: Node<K, V> | undefined): void {
    if (!node) return;
    node.value = undefined as V;
    node.dead = true;
  }

  clear(): void {
    for (const node of this.#live.values()) this.#release(node);
    this.#live.clear();
    this.#nodes = [];
    this.#head = 0;
  }

  /** The oldest live entry, or `undefined` when empty. */
  first(): Node<K, V> | undefined {
    const nodes = this.#nodes;
    while (this.#head < nodes.length) {
      const node = nodes[this.#head]!;
      if (!node.dead) return node;
      this.#head += 1;
    }
    return undefined;
  }

  /** The live values, oldest first. */
  values(): V[] {
    return this.#liveNodes().map((node) => node.value);
  }

  /** Reorders the live entries with a stable sort (equal entries keep their order). */
  sort(compare: (a: V, b: V) => number): void {
    this.#nodes = this.#liveNodes().sort((a, b) => compare(a.value, b.value));
    this.#head = 0;
  }

  #liveNodes(): Node<K, V>[] {
    const live: Node<K, V>[] = [];
    const nodes = this.#nodes;
    for (let i = this.#head; i < nodes.length; i++) {
      const node = nodes[i]!;
      if (!node.dead) live.push(node);
    }
    return live;
  }

  #compact(): void {
    this.#nodes = this.#liveNodes();
    this.#head = 0;
  }
}
