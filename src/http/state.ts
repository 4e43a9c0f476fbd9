import type { AuthInfo } from "../auth/key-store";

/** Per-request facts shared by the hooks, the pipeline, the error handler and the access log. */
export interface RequestState {
  requestId: string;
  startedAt: number;
  startedPerf: number;
  headers: Record<string, string>;
  auth?: AuthInfo;
  fn?: string;
  provider?: string;
  credits?: number;
  cached?: boolean;
  status?: number;
  errorCode?: string;
  /** kept only for Idempotency-Key replays (memory only) */
  responseBody?: string;
}
