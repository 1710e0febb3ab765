/**
 * Redirects of a model request. fetch follows a 301, 302 or 303 by sending the POST again as a GET
 * without its body, so an OPENAI_BASE_URL that answers with nginx's usual http→https or old-path
 * redirect got a 405 from the target, blamed on the model. Such a redirect now comes back as it
 * is (the client names its Location, model-errors.ts `redirectError`); 307 and 308, which keep the
 * method and body, are still followed (fetch drops the Authorization header across origins).
 */
import type { FetchLike } from "../fetch-body-transform.ts";

export function redirectAwareFetch(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, { ...init, redirect: "manual" });
    if (response.status !== 307 && response.status !== 308) return response;
    await response.body?.cancel();
    return base(url, { ...init, redirect: "follow" });
  };
}
