/**
 * A fetch whose response bodies pass through a transform chosen per response (status and headers
 * as they came): what the model client and the MCP HTTP transport wrap around the global fetch.
 *
 *   const fetchLike = fetchTransformingBodies((response) => (isEventStream(response) ? new TransformStream(…) : undefined));
 */
export type FetchLike = (url: string | URL | Request, init?: RequestInit) => Promise<Response>;

export type BodyTransform = TransformStream<Uint8Array, Uint8Array>;

/** `base` with each response body for which `transformFor` gives a transform passed through it; other responses as they are. */
export function fetchTransformingBodies(transformFor: (response: Response) => BodyTransform | undefined, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    const transform = response.body ? transformFor(response) : undefined;
    if (!response.body || !transform) return response;
    return new Response(response.body.pipeThrough(transform), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
