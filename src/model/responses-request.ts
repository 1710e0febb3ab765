/**
 * The Responses wire form of valarmind's input: a user message that carries images (the turn's
 * `@shot.png` or `--image`) becomes content parts, its text first as one `input_text` part, then
 * one `input_image` part per image. A `reasoning_text` item (the chat wire's) is left out; every
 * other item is sent as built. Pure and SDK-free.
 */
import type { InputItem } from "./types.ts";

export type ResponsesContentPart = { type: "input_text"; text: string } | { type: "input_image"; image_url: string; detail: "auto" };

export type ResponsesInputItem =
  | Exclude<InputItem, { type: "message" } | { type: "reasoning_text" } | { type: "reasoning" }>
  | Omit<Extract<InputItem, { type: "reasoning" }>, "tokens">
  | { type: "message"; role: "user" | "assistant" | "developer" | "system"; content: string | ResponsesContentPart[] };

export function toResponsesInput(input: readonly InputItem[]): ResponsesInputItem[] {
  return input.flatMap((item): ResponsesInputItem[] => {
    // Reasoning text is for the chat wire's reasoning_content; here a reasoning item would need the server's own id.
    if (item.type === "reasoning_text") return [];
    if (item.type === "reasoning") {
      const { tokens: _counted, ...sent } = item;
      return [sent];
    }
    if (item.type !== "message") return [item];
    const { images, ...message } = item;
    if (!images || images.length === 0) return [message];
    const parts: ResponsesContentPart[] = [
      ...(message.content !== "" ? [{ type: "input_text" as const, text: message.content }] : []),
      ...images.map((image) => ({ type: "input_image" as const, image_url: image.image_url, detail: image.detail })),
    ];
    return [{ ...message, content: parts }];
  });
}
