/**
 * AWS's event stream framing (`application/vnd.amazon.eventstream`), as ConverseStream answers:
 * each message a prelude (total length, headers length: 4-byte big-endian each, then the CRC32 of
 * those 8 bytes), its headers (a 1-byte name length, the name, a 1-byte value type, the value), its
 * payload, and the CRC32 of all before it. Bedrock's messages carry `:message-type` (`event`,
 * `exception` or `error`), `:event-type` or `:exception-type`, and a JSON payload.
 */
import { answerTooLarge, HttpStatusError } from "../../http-transport";
import { ProviderError } from "../../types";

const PRELUDE = 12;
/** prelude and the trailing message CRC */
const OVERHEAD = 16;

/** one decoded message: its headers (strings, numbers, booleans; bytes as base64) and its payload */
export interface EventMessage {
  headers: Record<string, string | number | boolean>;
  payload: Uint8Array;
}

const crc32 = (bytes: Uint8Array): number => Bun.hash.crc32(bytes) >>> 0;
const utf8 = new TextDecoder();

const malformed = (why: string) => new ProviderError("connection", `upstream sent a malformed event stream (${why})`);

function headersOf(bytes: Uint8Array): Record<string, string | number | boolean> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Record<string, string | number | boolean> = {};
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.length) throw malformed("header past its end");
  };
  while (at < bytes.length) {
    need(1);
    const nameLength = view.getUint8(at++);
    need(nameLength + 1);
    const name = utf8.decode(bytes.subarray(at, at + nameLength));
    at += nameLength;
    const type = view.getUint8(at++);
    switch (type) {
      case 0:
        out[name] = true;
        break;
      case 1:
        out[name] = false;
        break;
      case 2:
        need(1);
        out[name] = view.getInt8(at);
        at += 1;
        break;
      case 3:
        need(2);
        out[name] = view.getInt16(at);
        at += 2;
        break;
      case 4:
        need(4);
        out[name] = view.getInt32(at);
        at += 4;
        break;
      case 5:
      case 8:
        // int64, timestamp: as a number (Bedrock sends none it needs exactly)
        need(8);
        out[name] = Number(view.getBigInt64(at));
        at += 8;
        break;
      case 6:
      case 7: {
        need(2);
        const length = view.getUint16(at);
        at += 2;
        need(length);
        const value = bytes.subarray(at, at + length);
        out[name] = type === 7 ? utf8.decode(value) : Buffer.from(value).toString("base64");
        at += length;
        break;
      }
      case 9:
        need(16);
        out[name] = Buffer.from(bytes.subarray(at, at + 16)).toString("hex");
        at += 16;
        break;
      default:
        throw malformed(`header value type ${type}`);
    }
  }
  return out;
}

/**
 * The messages of a body, in order, each checked against its CRCs; a message over `max` bytes is
 * refused. The pieces of a message that comes in many reads are joined once, when it is whole.
 */
export async function* eventMessages(body: ReadableStream<Uint8Array> | null, max: number): AsyncGenerator<EventMessage> {
  if (!body) throw new Error("Attempted to iterate over a response with no body");
  let pieces: Uint8Array[] = [];
  let size = 0;
  /** bytes needed before the next message can be read: its prelude, then all of it */
  let need = PRELUDE;
  for await (const chunk of body) {
    pieces.push(chunk);
    size += chunk.length;
    if (size < need) continue;
    let buffer: Uint8Array = pieces.length === 1 ? (pieces[0] as Uint8Array) : Buffer.concat(pieces, size);
    need = PRELUDE;
    while (buffer.length >= PRELUDE) {
      const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
      const total = view.getUint32(0);
      const headersLength = view.getUint32(4);
      if (crc32(buffer.subarray(0, 8)) !== view.getUint32(8)) throw malformed("prelude checksum");
      if (total > max) throw answerTooLarge(max);
      if (total < OVERHEAD + headersLength) throw malformed("lengths");
      if (buffer.length < total) {
        need = total;
        break;
      }
      if (crc32(buffer.subarray(0, total - 4)) !== view.getUint32(total - 4)) throw malformed("message checksum");
      const headers = headersOf(buffer.subarray(PRELUDE, PRELUDE + headersLength));
      yield { headers, payload: buffer.slice(PRELUDE + headersLength, total - 4) };
      buffer = buffer.subarray(total);
    }
    pieces = buffer.length > 0 ? [buffer] : [];
    size = buffer.length;
  }
  if (size > 0) throw new ProviderError("connection", "upstream stream ended early");
}

/**
 * The HTTP status of an exception a stream carries, as Bedrock answers the same exception before
 * a stream (ConverseStream's exception events: the Bedrock Runtime API reference's errors).
 */
const EXCEPTION_STATUS: Record<string, number> = {
  throttlingexception: 429,
  servicequotaexceededexception: 429,
  modelnotreadyexception: 429,
  serviceunavailableexception: 503,
  internalserverexception: 500,
  modelstreamerrorexception: 424,
  modeltimeoutexception: 408,
  validationexception: 400,
};

/**
 * A stream's events as `{ [eventType]: payload }` (the ConverseStreamOutput union, as the SDK
 * gives it); an exception or error message throws HttpStatusError with the exception's status and
 * its type in `x-amzn-errortype`, as the same failure before the stream would.
 */
export async function* converseEvents(body: ReadableStream<Uint8Array> | null, max: number): AsyncGenerator<unknown> {
  for await (const m of eventMessages(body, max)) {
    const kind = m.headers[":message-type"];
    const text = utf8.decode(m.payload);
    let payload: unknown;
    try {
      payload = text === "" ? {} : JSON.parse(text);
    } catch {
      if (kind === "event") throw new SyntaxError("Error reading response: malformed event stream JSON.");
      payload = { message: text };
    }
    if (kind === "event") {
      yield { [String(m.headers[":event-type"])]: payload };
      continue;
    }
    const type = String(kind === "exception" ? m.headers[":exception-type"] : m.headers[":error-code"]);
    const message =
      typeof (payload as { message?: unknown }).message === "string"
        ? (payload as { message: string }).message
        : String(m.headers[":error-message"] ?? type);
    const status = EXCEPTION_STATUS[type.toLowerCase()] ?? 500;
    const name = type.charAt(0).toUpperCase() + type.slice(1);
    throw new HttpStatusError(status, { message }, undefined, new Headers({ "x-amzn-errortype": name }));
  }
}
