/**
 * llama.cpp builds from before late 2025 send a streamed request's error as an SSE field of its own
 * (`error: {"code":400,"message":"…exceeds the available context size…"}`, then `data: [DONE]`,
 * HTTP 200). The openai SDK reads only `event` and `data`, so the error was lost: before any chunk
 * it looked like a server that does not speak the protocol, mid-answer like a cut stream. This
 * fetch rewrites such a line as `data: {"error": …}`, which the stream mappers already classify
 * (a context overflow compacts the window and retries).
 */
import { fetchTransformingBodies, type BodyTransform, type FetchLike } from "../fetch-body-transform.ts";

const ERROR_FIELD = /^error:[ ]?(.*?)\r?$/gm;

function asDataLine(value: string): string {
  let error: unknown = value;
  try {
    error = JSON.parse(value);
  } catch {
    // A plain-text error: kept as a string.
  }
  return `data: ${JSON.stringify({ error })}`;
}

function rewriteSseErrorFields(): BodyTransform {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let carry = "";
  const rewrite = (text: string) => text.replace(ERROR_FIELD, (_, value: string) => asDataLine(value));
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      carry += decoder.decode(chunk, { stream: true });
      const end = carry.lastIndexOf("\n");
      if (end === -1) return;
      controller.enqueue(encoder.encode(rewrite(carry.slice(0, end + 1))));
      carry = carry.slice(end + 1);
    },
    flush(controller) {
      carry += decoder.decode();
      if (carry !== "") controller.enqueue(encoder.encode(rewrite(carry)));
    },
  });
}

/** `base`, with event-stream bodies passed through rewriteSseErrorFields. */
export function sseErrorFieldFetch(base?: FetchLike): FetchLike {
  return fetchTransformingBodies((response) => ((response.headers.get("content-type") ?? "").includes("text/event-stream") ? rewriteSseErrorFields() : undefined), base);
}
