import { maskUrlsIn } from "../audit/mask";
import { timeOrderedId } from "../ids";
import type { Logger } from "../log";
import type { AlertEventType, ClaimedDelivery, WebhookStore } from "./interface";
import { checkWebhookUrl, deliveryBody, nextAttemptAt, signatureHeader } from "./sign";
import { AlertWatch } from "./watch";

/** `[alerts]` (docs/alerts.md#settings). */
export interface AlertSettings {
  /** how often a node looks for due deliveries */
  pollMs: number;
  /** the first retry's delay; each next one doubles it (at most an hour) */
  retryBaseMs: number;
  /** how long after its event a delivery is still tried (24 h) */
  retryWindowMs: number;
  /** how long a receiver has to answer */
  timeoutMs: number;
  /** how long the secret before a rotation still signs */
  rotationGraceMs: number;
  /** how often a node looks for key.expiring and spend.spike */
  scanMs: number;
  /** webhook URLs may name private, loopback or link-local addresses */
  allowPrivateUrls: boolean;
}

/** Deliveries claimed per look. */
const CLAIM_BATCH = 20;

/**
 * Alerts as the gateway runs them: the endpoints' store, the watch of charges, and the delivery of
 * the outbox. Each node looks for due deliveries every `pollMs`, claims them (no other node sends
 * them while its claim lasts), POSTs each signed, and records the outcome; a failed one is tried
 * again after a doubling delay until the window is over.
 */
export class Alerts {
  readonly watch: AlertWatch;
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<void> | null = null;
  private lastRefresh = 0;
  private lastScan = 0;
  /** ends the attempts in flight at shutdown: their claims run out and another node (or the next start) sends them */
  private readonly stopping = new AbortController();
  /** told after a change of an endpoint made through this node (other nodes: Redis, when configured) */
  onChange?: () => void;

  constructor(
    readonly store: WebhookStore,
    readonly settings: AlertSettings,
    private readonly logger?: Logger,
  ) {
    this.watch = new AlertWatch(() => store.watched());
  }

  /** An endpoint was created or removed: the watch reads them again, here and (through onChange) on the other nodes. */
  changed(): void {
    void this.refresh();
    this.onChange?.();
  }

  async refresh(): Promise<void> {
    this.lastRefresh = Date.now();
    try {
      await this.watch.refresh();
    } catch (err) {
      this.logger?.log("warn", "alert endpoints could not be read", { error_message: (err as Error).message });
    }
  }

  /** A provider and model's circuit opened or closed: written to the outbox in a transaction of its own (no change carries it). */
  breaker(provider: string, model: string, state: "open" | "closed"): void {
    const type: AlertEventType = state === "open" ? "provider.circuit_open" : "provider.circuit_closed";
    const now = Date.now();
    const event = { id: timeOrderedId("evt", now), type, created: now, data: { provider, model, state } };
    this.store.enqueue(event, null).catch((err) => {
      this.logger?.log("warn", "alert event not written", { event: type, error_message: (err as Error).message });
    });
  }

  start(): void {
    if (this.timer) return;
    void this.refresh();
    this.timer = setInterval(() => void this.tick(), this.settings.pollMs);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopping.abort();
    await this.running;
  }

  /** One look: due deliveries claimed and sent (not while the last look is still sending). */
  tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.deliverDue().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async deliverDue(): Promise<void> {
    try {
      if (Date.now() - this.lastRefresh >= Math.max(this.settings.pollMs, 5000)) await this.refresh();
      // no endpoint anywhere (as this node last read them): nothing can be due, no claim is tried
      if (this.watch.endpoints === 0) return;
      if (Date.now() - this.lastScan >= this.settings.scanMs) {
        this.lastScan = Date.now();
        await this.store.scan(this.lastScan);
      }
      const lease = this.settings.timeoutMs + 5000;
      const due = await this.store.claim(Date.now(), lease, CLAIM_BATCH);
      await Promise.all(due.map((d) => this.send(d)));
    } catch (err) {
      this.logger?.log("warn", "alert deliveries failed", { error_message: maskUrlsIn((err as Error).message) });
    }
  }

  /** One attempt: the signed POST, then its outcome recorded (a 2xx ends the delivery). */
  private async send(d: ClaimedDelivery): Promise<void> {
    const body = deliveryBody(d);
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      // checked again at each attempt: a name may resolve elsewhere than when the endpoint was made
      await checkWebhookUrl(d.url, this.settings.allowPrivateUrls);
      const res = await fetch(d.url, {
        method: "POST",
        headers: { "content-type": "application/json", "textai-signature": signatureHeader(body, d.secrets, Date.now()) },
        body,
        redirect: "manual",
        signal: AbortSignal.any([AbortSignal.timeout(this.settings.timeoutMs), this.stopping.signal]),
      });
      statusCode = res.status;
      await res.body?.cancel();
    } catch (err) {
      // (an error may name the URL, and the deliveries' listing shows it: masked, as everywhere it is shown)
      error = (err as Error).name === "TimeoutError" ? "no answer in time" : maskUrlsIn((err as Error).message).slice(0, 200);
    }
    // stopped mid-attempt: nothing is recorded, the claim runs out and the delivery is sent again
    if (this.stopping.signal.aborted && statusCode === null) return;
    const now = Date.now();
    const delivered = statusCode !== null && statusCode >= 200 && statusCode < 300;
    const next = nextAttemptAt(now, d.attempts + 1, this.settings.retryBaseMs);
    const nextAt = delivered || next > d.created + this.settings.retryWindowMs ? null : next;
    if (!delivered) error ??= `answered ${statusCode}`;
    await this.store.finish(d, { delivered, statusCode, error: delivered ? null : error, nextAt }, now);
  }
}
