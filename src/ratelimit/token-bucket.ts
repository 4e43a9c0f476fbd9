/** Continuous-refill token bucket; pure, with the clock passed in. */
export class TokenBucket {
  tokens: number;
  updatedAt: number;

  constructor(
    readonly capacity: number,
    /** tokens per millisecond */
    readonly refillPerMs: number,
    now: number,
  ) {
    this.tokens = capacity;
    this.updatedAt = now;
  }

  private refill(now: number): void {
    if (now > this.updatedAt) {
      this.tokens = Math.min(this.capacity, this.tokens + (now - this.updatedAt) * this.refillPerMs);
      this.updatedAt = now;
    }
  }

  /** tokens available at `now` */
  tokensAt(now: number): number {
    this.refill(now);
    return this.tokens;
  }

  take(now: number): boolean {
    this.refill(now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** ms until one whole token is available */
  msUntilToken(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil((1 - this.tokens) / this.refillPerMs);
  }

  /** ms until the bucket is full again */
  msUntilFull(now: number): number {
    this.refill(now);
    return Math.ceil((this.capacity - this.tokens) / this.refillPerMs);
  }
}
