// The request log's backlog on a full queue: the Array#shift + unshift it had against the ring
// (src/requestlog/backlog.ts), in one run. `bun bench/backlog-ab.ts` (under /tmp/bench.lock).
import { Backlog } from "../src/requestlog/backlog";

const row = (i: number) => ({ requestId: `req_${i}`, time: i });
class Old {
  pending: object[] = [];
  dropped = 0;
  constructor(readonly max: number) {}
  record(r: object) {
    if (this.pending.length >= this.max) {
      this.pending.shift();
      this.dropped++;
    }
    this.pending.push(r);
  }
  fail(batch: number) {
    const rows = this.pending.splice(0, batch);
    this.pending.unshift(...rows);
    if (this.pending.length > this.max) {
      const over = this.pending.length - this.max;
      this.pending.splice(0, over);
      this.dropped += over;
    }
  }
}
class New {
  b: Backlog<object>;
  dropped = 0;
  constructor(max: number) {
    this.b = new Backlog(max);
  }
  record(r: object) {
    this.dropped += this.b.push(r);
  }
  fail(batch: number) {
    const rows = this.b.take(batch);
    this.dropped += this.b.putBack(rows);
  }
}
const rows = Array.from({ length: 500_000 }, (_, i) => row(i));
for (let round = 0; round < 3; round++)
  for (const max of [1_000, 100_000, 1_000_000])
    for (const [name, K] of [
      ["old", Old],
      ["new", New],
    ] as const) {
      const q = new K(max);
      for (let i = 0; i < max; i++) q.record(rows[i % rows.length]);
      q.fail(500);
      const t = performance.now();
      for (let i = 0; i < rows.length; i++) {
        q.record(rows[i]);
        if (i % 1000 === 0) q.fail(500);
      }
      if (round === 2)
        console.log(
          name,
          max,
          "us/record on a full backlog (a failed write every 1000)",
          (((performance.now() - t) * 1000) / rows.length).toFixed(3),
        );
    }
