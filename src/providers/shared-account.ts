import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { invalidRequest } from "../errors";
import { isObject, type ProxyApi } from "./types";

/**
 * Every tenant's `/v1` call reaches the upstream through the operator's one account, so what the
 * upstream stores under that account is shared by all tenants. These checks keep a tenant from
 * reaching another tenant's stored objects, and from making a self-hosted backend fetch URLs
 * inside the operator's network (docs/shared-upstream.md).
 */

const SHARED =
  "the upstream account is shared by every tenant of this gateway, so objects stored in it cannot be used through it; send the content itself";

/** 400 for any field that stores an object in the upstream account or names one stored there. */
export function refuseSharedObjects(api: ProxyApi, body: Record<string, unknown>): void {
  if (api === "embeddings") return;
  if (body.store === true) throw invalidRequest(`store: true is not served: ${SHARED}`, "store");
  if (api === "responses") {
    for (const f of ["previous_response_id", "conversation"]) {
      if (body[f] !== undefined && body[f] !== null) throw invalidRequest(`${f} is not served: ${SHARED}`, f);
    }
    if (body.background === true) throw invalidRequest(`background: true is not served: ${SHARED}`, "background");
    const input = Array.isArray(body.input) ? body.input : [];
    input.forEach((item, i) => {
      if (!isObject(item)) return;
      if (item.type === "item_reference")
        throw invalidRequest(`input[${i}]: item references are not served: ${SHARED}`, `input[${i}]`);
      const parts = Array.isArray(item.content) ? item.content : [];
      parts.forEach((p, j) => {
        if (isObject(p) && typeof p.file_id === "string")
          throw invalidRequest(`input[${i}].content[${j}].file_id is not served: ${SHARED}`, `input[${i}].content[${j}].file_id`);
      });
    });
  }
  if (api === "chat/completions") {
    const messages = Array.isArray(body.messages) ? body.messages : [];
    messages.forEach((m, i) => {
      const parts = isObject(m) && Array.isArray(m.content) ? m.content : [];
      parts.forEach((p, j) => {
        if (isObject(p) && isObject(p.file) && typeof p.file.file_id === "string")
          throw invalidRequest(
            `messages[${i}].content[${j}].file.file_id is not served: ${SHARED}`,
            `messages[${i}].content[${j}]`,
          );
      });
    });
  }
  const tools = Array.isArray(body.tools) ? body.tools : [];
  tools.forEach((t, i) => {
    if (!isObject(t)) return;
    if (t.vector_store_ids !== undefined)
      throw invalidRequest(`tools[${i}].vector_store_ids is not served: ${SHARED}`, `tools[${i}]`);
    if (t.type === "code_interpreter" && typeof t.container === "string")
      throw invalidRequest(`tools[${i}].container is not served: ${SHARED}`, `tools[${i}]`);
  });
}

/** A URL the client asks the provider to fetch, with the field that holds it. */
export interface RemoteUrl {
  url: string;
  param: string;
}

const remote = (v: unknown): v is string => typeof v === "string" && /^https?:/i.test(v);

/** Each object part of each item's `content` list in `list` (messages, input items), with its field path. */
function eachPart(list: unknown, name: string, visit: (part: Record<string, unknown>, param: string) => void): void {
  (Array.isArray(list) ? list : []).forEach((item, i) => {
    const parts = isObject(item) && Array.isArray(item.content) ? item.content : [];
    parts.forEach((p, j) => {
      if (isObject(p)) visit(p, `${name}[${i}].content[${j}]`);
    });
  });
}

/** Every http(s) URL in the request that the provider would fetch (images, files, audio). */
export function remoteUrls(api: ProxyApi, body: Record<string, unknown>): RemoteUrl[] {
  const found: RemoteUrl[] = [];
  if (api === "chat/completions")
    eachPart(body.messages, "messages", (p, param) => {
      const url = isObject(p.image_url) ? p.image_url.url : undefined;
      if (remote(url)) found.push({ url, param });
    });
  if (api === "responses")
    eachPart(body.input, "input", (p, param) => {
      for (const f of ["image_url", "file_url"]) {
        const url = p[f];
        if (remote(url)) found.push({ url, param: `${param}.${f}` });
      }
    });
  return found;
}

/** Loopback, private, link-local, carrier-grade NAT, unspecified, multicast and reserved ranges (IPv4 and IPv6). */
export function privateAddress(ip: string): boolean {
  const v = isIP(ip);
  if (v === 4) {
    const [a, b] = ip.split(".").map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    );
  }
  if (v === 6) {
    const g = ipv6Groups(ip.toLowerCase());
    const embedded = `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
    // IPv4-mapped (::ffff:a.b.c.d, also written ::ffff:7f00:1), IPv4-compatible and NAT64 addresses carry an IPv4 address
    if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
      if (g[5] === 0 && g[6] === 0) return true; // :: and ::1
      return privateAddress(embedded);
    }
    if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return privateAddress(embedded);
    return (g[0] & 0xfe00) === 0xfc00 || (g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xff00) === 0xff00;
  }
  return true;
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function ipv6Groups(ip: string): number[] {
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  const text = tail
    ? `${ip.slice(0, tail.index)}${((+tail[1] << 8) | +tail[2]).toString(16)}:${((+tail[3] << 8) | +tail[4]).toString(16)}`
    : ip;
  const [head, rest] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = rest ? rest.split(":") : [];
  const zeros = rest === undefined ? [] : Array(8 - left.length - right.length).fill("0");
  return [...left, ...zeros, ...right].map((x) => Number.parseInt(x, 16));
}

/**
 * 400 when a URL the provider would fetch points at a private, loopback or link-local address,
 * named directly or through DNS (every address a name resolves to is checked).
 */
export async function refusePrivateUrls(urls: RemoteUrl[]): Promise<void> {
  for (const { url, param } of urls) {
    let host: string;
    try {
      host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    } catch {
      throw invalidRequest(`${param} is not a valid URL`, param);
    }
    const addresses = isIP(host)
      ? [host]
      : await lookup(host, { all: true, verbatim: true }).then(
          (r) => r.map((a) => a.address),
          () => [] as string[],
        );
    if (addresses.length === 0) throw invalidRequest(`${param}: the host ${host} does not resolve`, param);
    if (addresses.some(privateAddress))
      throw invalidRequest(`${param}: URLs of private, loopback or link-local addresses are not forwarded`, param);
  }
}
