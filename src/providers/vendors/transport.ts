import type { ProviderConfig } from "../../config";
import { HttpTransport } from "../http-transport";
import { sharedHttp1Pool, usesHttp1 } from "../http1";
import { DEFAULT_TIMEOUT_MS, type ProxyTransport } from "../openai-like";
import type { AdapterOptions, VendorDescriptor } from "./descriptor";

/** The lean transport for a provider whose API answers at `baseUrl`, or undefined for the SDK's own. */
export function proxyTransport(
  config: ProviderConfig,
  vendor: VendorDescriptor,
  baseUrl: string,
  opts: AdapterOptions,
): ProxyTransport | undefined {
  if (opts.transport === "sdk") return undefined;
  const apiKey = config.api_key || "not-needed";
  return new HttpTransport({
    baseUrl,
    apiKey,
    authHeaders: vendor.authHeaders?.(apiKey),
    timeoutMs: config.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    // a plain-http upstream: the HTTP/1.1 client on the event loop (http1.ts); else Bun's fetch
    fetch: opts.fetch ?? (usesHttp1(baseUrl) ? sharedHttp1Pool().fetch : undefined),
  });
}
