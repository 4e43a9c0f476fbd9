/**
 * Starts a streamed chat on the gateway at `url` whose answer is long (model-a echoing a 150-word
 * prompt, max_tokens 400) and reads it until its first 4 content chunks have come; the caller
 * leaves it with `ac.abort()`.
 */
export async function startLongChatStream(
  url: string,
  key: string,
  ac: AbortController,
): Promise<{ status: number; reader: ReadableStreamDefaultReader<Uint8Array> }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    signal: ac.signal,
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model: "model-a",
      stream: true,
      max_tokens: 400,
      messages: [{ role: "user", content: Array.from({ length: 150 }, (_, i) => `word${i}`).join(" ") }],
    }),
  });
  const reader = res.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  let seen = "";
  while ((seen.match(/"content"/g) ?? []).length < 4) {
    const r = await reader.read();
    if (r.done) break;
    seen += new TextDecoder().decode(r.value);
  }
  return { status: res.status, reader };
}
