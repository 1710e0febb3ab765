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

/** Bodies past this are passed on unread: an error envelope is a few hundred bytes. */
const JSON_ERROR_BYTES = 64 * 1024;

/**
 * A gateway that answers a streamed request with status 200 and the API's error envelope as JSON
 * (`{"error":{"message":…}}`): rewritten as one `data: {"error": …}` event, so the user reads the
 * server's own message, not "not a Responses API server". Any other body passes unchanged.
 */
function rewriteJsonErrorBody(): BodyTransform {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let passing = false;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (passing) return controller.enqueue(chunk);
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size <= JSON_ERROR_BYTES) return;
      passing = true;
      for (const held of chunks.splice(0)) controller.enqueue(held);
    },
    flush(controller) {
      if (passing) return;
      const body = Buffer.concat(chunks);
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString("utf8"));
      } catch {
        parsed = undefined;
      }
      const error = typeof parsed === "object" && parsed !== null && "error" in parsed ? (parsed as { error: unknown }).error : undefined;
      controller.enqueue(error !== undefined && error !== null ? new TextEncoder().encode(`data: ${JSON.stringify({ error })}\n\n`) : body);
    },
  });
}

/** `base`, with event-stream bodies passed through rewriteSseErrorFields and a 200 JSON error envelope made an event. */
export function sseErrorFieldFetch(base?: FetchLike): FetchLike {
  return fetchTransformingBodies((response) => {
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("text/event-stream")) return rewriteSseErrorFields();
    if (response.status === 200 && type.includes("application/json")) return rewriteJsonErrorBody();
    return undefined;
  }, base);
}
