/**
 * The fetch an MCP HTTP transport uses: each message of a response at most `maxBytes` (an SSE
 * event, up to its blank line, or a whole JSON body), like the stdio transport's 10 MB per line.
 * A server that streams one endless event (hostile or broken) would otherwise be buffered, whole,
 * for as long as the session lasts; past the cap the response is cancelled (the server sees the
 * connection close) and the call it carried fails with a message saying why.
 */
import { fetchTransformingBodies, type BodyTransform, type FetchLike } from "../fetch-body-transform.ts";

export function boundedFetch(maxBytes: number, base?: FetchLike): FetchLike {
  return fetchTransformingBodies(() => messageCap(maxBytes), base);
}

/** Errors (cancelling the response) once one message passes `maxBytes`. */
function messageCap(maxBytes: number): BodyTransform {
  let sinceBoundary = 0;
  let previous = 0;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      // Bytes since the last blank line ("\n\n", "\r\n\r\n" ends with "\n\n" too): the current event's.
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i] ?? 0;
        if (byte === 0x0a && previous === 0x0a) sinceBoundary = 0;
        else if (byte !== 0x0d) sinceBoundary++;
        if (byte !== 0x0d) previous = byte;
      }
      if (sinceBoundary > maxBytes) {
        controller.error(new Error(`the server sent one message of more than ${maxBytes} bytes; it was not read further`));
        return;
      }
      controller.enqueue(chunk);
    },
  });
}
