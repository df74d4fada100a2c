/**
 * A bounded cache of what was used lately, in two generations, each up to half the bound (counted in
 * entries, or by a weight of each value): when the newer is full it becomes the older and the older
 * is dropped; an entry found in the older moves to the newer. Evicting the least recently used entry
 * one at a time from a Map instead (its first key) makes every eviction walk the entries deleted at
 * the front of the Map: once the bound is reached, a lookup that misses or an insert costs several
 * times the work it saves (8 µs a URN lookup, 8-27 µs a kept row, as measured in the registry and
 * keptReads.ts).
 */

interface Generation<V> {
  entries: Map<string, V>;
  weight: number;
}

const generation = <V>(): Generation<V> => ({ entries: new Map(), weight: 0 });

export class RecentCache<V> {
  private newer = generation<V>();
  private older = generation<V>();

  constructor(
    /** The bound of both generations together. */
    private readonly maxWeight: number,
    private readonly weightOf: (value: V) => number = () => 1,
  ) {}

  /** The value, kept as used lately. */
  get(key: string): V | undefined {
    const value = this.newer.entries.get(key);
    if (value !== undefined) return value;
    const before = this.older.entries.get(key);
    if (before === undefined) return undefined;
    this.remove(this.older, key);
    this.add(key, before);
    return before;
  }

  /** The value, without counting it as used. */
  peek(key: string): V | undefined {
    return this.newer.entries.get(key) ?? this.older.entries.get(key);
  }

  has(key: string): boolean {
    return this.newer.entries.has(key) || this.older.entries.has(key);
  }

  set(key: string, value: V): void {
    this.delete(key);
    this.add(key, value);
  }

  delete(key: string): void {
    this.remove(this.newer, key);
    this.remove(this.older, key);
  }

  get size(): number {
    return this.newer.entries.size + this.older.entries.size;
  }

  private add(key: string, value: V): void {
    const weight = this.weightOf(value);
    if (this.newer.weight + weight > this.maxWeight / 2 && this.newer.entries.size > 0) {
      this.older = this.newer;
      this.newer = generation();
    }
    this.newer.entries.set(key, value);
    this.newer.weight += weight;
  }

  private remove(g: Generation<V>, key: string): void {
    const value = g.entries.get(key);
    if (value === undefined) return;
    g.entries.delete(key);
    g.weight -= this.weightOf(value);
  }
}
