/**
 * Rows waiting to be written, oldest first, at most `capacity`: past it the oldest are dropped.
 * A ring over a fixed-size array (grown by doubling up to `capacity`), so a full backlog drops its
 * oldest row in O(1) on every append, whatever the engine does with Array#shift.
 */
export class Backlog<T> {
  private items: (T | undefined)[] = [];
  private head = 0;
  private count = 0;

  constructor(private readonly capacity: number) {}

  get length(): number {
    return this.count;
  }

  /** Appends `item`; returns 1 when the oldest row made room for it, else 0. */
  push(item: T): number {
    if (this.count === this.capacity) {
      this.items[this.head] = item;
      this.head = (this.head + 1) % this.capacity;
      return 1;
    }
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) % this.items.length] = item;
    this.count++;
    return 0;
  }

  /** Removes and returns the oldest `n` rows (fewer when fewer wait). */
  take(n: number): T[] {
    const out: T[] = [];
    const size = this.items.length;
    for (let k = Math.min(n, this.count); k > 0; k--) {
      out.push(this.items[this.head] as T);
      this.items[this.head] = undefined;
      this.head = (this.head + 1) % size;
      this.count--;
    }
    return out;
  }

  /**
   * Puts `rows` (taken earlier, so older than every row waiting) back in front; when they do not
   * all fit, the oldest of them are dropped. Returns how many were dropped.
   */
  putBack(rows: T[]): number {
    const keep = Math.min(rows.length, this.capacity - this.count);
    while (this.items.length < this.count + keep) this.grow();
    const size = this.items.length;
    for (let i = rows.length - 1; i >= rows.length - keep; i--) {
      this.head = (this.head - 1 + size) % size;
      this.items[this.head] = rows[i];
      this.count++;
    }
    return rows.length - keep;
  }

  private grow(): void {
    const size = Math.min(this.capacity, Math.max(16, this.items.length * 2));
    const next: (T | undefined)[] = new Array(size);
    for (let i = 0; i < this.count; i++) next[i] = this.items[(this.head + i) % this.items.length];
    this.items = next;
    this.head = 0;
  }
}
