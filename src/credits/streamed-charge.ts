import type { TokenPrice } from "../config";
import { StreamUsage, type TokenUsage } from "../providers/usage";
import type { ChargeDetails, CreditLedger, Reservation } from "./interface";
import { creditsFor, deliveredChars, tokensOfChars } from "./pricing";

export interface StreamedChargeCall {
  ledger: CreditLedger;
  /** the estimate held before the provider was called */
  reservation: Reservation;
  /** the price of the model that is answering */
  price: TokenPrice;
  /** its per-call fees (built-in tools, audio output), charged with the tokens */
  fees?: number;
  /** told when the provider's reported usage costs more than the hold (the hold is charged) */
  overHold?: (credits: number) => void;
  /** the prompt's estimated size, used when the provider reports no usage */
  promptTokens: number;
  /** the ledger row's details; never the client's signal (a client that left is charged all the same) */
  details: ChargeDetails;
}

/**
 * The charge of one streamed /v1 answer (chat completions and responses alike), from the first
 * event to the end, exactly once: the provider's work is charged whether the stream completed or
 * the client left before its end, on the usage the provider reported if it arrived, else on an
 * estimate (the prompt's size and the output delivered so far, about four characters a token);
 * never more than the hold. A stream the provider cut is not charged: its hold is given back.
 *
 * open -> charging -> charged, or open -> released; the hold ends exactly once.
 */
export class StreamedCharge {
  private phase: "open" | "charging" | "charged" | "released" = "open";
  private chars = 0;
  private readonly usage = new StreamUsage();
  private settled: Promise<Reservation> | null = null;

  constructor(private c: StreamedChargeCall) {}

  /** An event on its way to the client: its output counts, its usage report is kept. */
  saw(event: unknown): void {
    this.chars += deliveredChars(event);
    this.usage.see(event);
  }

  /** What the provider did so far: its report, else the estimate. */
  tokens(): { usage: TokenUsage; reported: boolean } {
    const usage = this.usage.get();
    if (usage) return { usage, reported: true };
    return { usage: { input: this.c.promptTokens, output: tokensOfChars(this.chars) }, reported: false };
  }

  get open(): boolean {
    return this.phase === "open";
  }

  /**
   * Charges what was delivered (the stream ended, or its client left), once: later calls get the
   * same outcome. Rejects with the ledger's error (insufficient_credits, storage unavailable).
   */
  charge(): Promise<Reservation> {
    if (this.settled) return this.settled;
    if (this.phase === "released") return Promise.resolve({ ...this.c.reservation, amount: 0 });
    this.phase = "charging";
    const { usage, reported } = this.tokens();
    const r = this.c.reservation;
    const credits = creditsFor(this.c.price, usage) + (this.c.fees ?? 0);
    if (reported && credits > r.amount) this.c.overHold?.(credits);
    this.settled = this.c.ledger.settle(r, { ...this.c.details, tokens: usage }, credits).then(
      () => {
        this.phase = "charged";
        return r;
      },
      (err) => {
        this.phase = "released";
        throw err;
      },
    );
    return this.settled;
  }

  /** Nothing to charge (the provider failed mid-stream): the hold goes back, once. */
  release(): void {
    if (this.phase !== "open") return;
    this.phase = "released";
    this.c.ledger.release(this.c.reservation);
  }
}
