/**
 * From pieces to a Responses API request, and the token arithmetic of the manifest.
 *
 * Every piece is counted exactly on its own (o200k). Text pieces end in "\n" and begin with "<",
 * a pre-token boundary of the o200k split, so pieces joined into one string count the same as
 * their sum; `boundaryTokens` measures the rest (0 for the standard sections, tested). The
 * request also carries framing the pieces do not: role markers around each input item and the
 * instructions, and the reply primer. That is estimated with fixed, documented constants
 * (docs/prompt-builder.md, "Token accounting"); `--tokens api` and the API's usage give the truth.
 */
import type { FunctionToolSpec, InputImage, InputItem, ModelRequest } from "../model/types.ts";
import { imageTokens } from "./images.ts";
import type { Piece } from "./section.ts";

/** Tokens the API adds around each input item (role/type markers). */
export const FRAMING_PER_INPUT_ITEM = 4;
/** Tokens around the instructions (they become the first system/developer message). */
export const FRAMING_INSTRUCTIONS = 4;
/** Tokens that prime the reply. */
export const FRAMING_REPLY = 3;

export type Count = (text: string) => number;

export function toolPiece(spec: FunctionToolSpec): Piece {
  return {
    id: `tool:${spec.name}`,
    type: "tool",
    format: "json",
    reason: "tool_definition",
    detail: `the ${spec.name} tool's definition`,
    placement: "tools",
    text: toolText(spec),
    stable: true,
    region: "tools",
  };
}

/** How a tool definition is counted: its JSON as sent. */
export function toolText(spec: FunctionToolSpec): string {
  return JSON.stringify(spec);
}

export function itemTokens(item: InputItem, count: Count): number {
  switch (item.type) {
    case "message":
      return count(item.content) + imagesTokens(item.images);
    case "function_call":
      return count(item.name) + count(item.arguments);
    case "function_call_output":
      return count(item.output);
    case "reasoning_text":
      return count(item.text);
    case "reasoning":
      // The encrypted content stands for the step's reasoning tokens (from its usage), which the model reads again.
      return (item.tokens ?? 0) + item.summary.reduce((n, part) => n + count(part.text), 0);
  }
}

/** Images have no text to count: each is estimated from its size (images.ts). */
function imagesTokens(images: readonly InputImage[] | undefined): number {
  return (images ?? []).reduce((n, image) => n + imageTokens(image), 0);
}

export function pieceTokens(piece: Piece, count: Count): number {
  if (piece.items) return piece.items.reduce((n, item) => n + itemTokens(item, count), 0);
  return count(piece.text ?? "") + imagesTokens(piece.images);
}

/** The order the API reads a request in (and caches its prefix): tools, instructions, input. */
export function apiOrder(pieces: readonly Piece[]): Piece[] {
  const rank = (p: Piece) => (p.placement === "tools" ? 0 : p.placement === "instructions" ? 1 : 2);
  return pieces
    .map((piece, index) => ({ piece, index }))
    .sort((a, b) => rank(a.piece) - rank(b.piece) || a.index - b.index)
    .map((x) => x.piece);
}

export interface AssembledParts {
  instructions: string;
  input: InputItem[];
  tools: FunctionToolSpec[];
  /** Input items each piece contributed to (a message piece shares its message with its neighbours). */
  itemsOf: Map<string, number>;
}

/** Joins instruction pieces, merges contiguous message pieces of one role and group, passes items through. */
export function assembleParts(pieces: readonly Piece[], tools: readonly FunctionToolSpec[]): AssembledParts {
  let instructions = "";
  const input: InputItem[] = [];
  const itemsOf = new Map<string, number>();
  let open: { role: "developer" | "user"; group: string | undefined; content: string; images: InputImage[] } | undefined;
  const flush = () => {
    if (open) input.push({ type: "message", role: open.role, content: open.content, ...(open.images.length > 0 && { images: open.images }) });
    open = undefined;
  };
  for (const piece of pieces) {
    if (piece.placement === "tools") continue;
    if (piece.placement === "instructions") {
      instructions += piece.text ?? "";
      continue;
    }
    if (piece.placement === "message") {
      const role = piece.role ?? "user";
      if (open?.role !== role || open.group !== piece.group) {
        flush();
        open = { role, group: piece.group, content: "", images: [] };
        itemsOf.set(piece.id, 1);
      } else {
        itemsOf.set(piece.id, 0);
      }
      open.content += piece.text ?? "";
      open.images.push(...(piece.images ?? []));
      continue;
    }
    flush();
    input.push(...(piece.items ?? []));
    itemsOf.set(piece.id, piece.items?.length ?? 0);
  }
  flush();
  return { instructions, input, tools: [...tools], itemsOf };
}

export function framingTokens(request: Pick<ModelRequest, "instructions" | "input">): number {
  return (request.instructions !== "" ? FRAMING_INSTRUCTIONS : 0) + FRAMING_PER_INPUT_ITEM * request.input.length + FRAMING_REPLY;
}

/**
 * A direct count of a whole request: every string the model reads (tool JSON, the instructions,
 * each input item) counted as sent, plus the framing constants. The manifest's `total_tokens`
 * equals this; its items sum to it minus `framing_tokens`.
 */
export function countRequest(request: Pick<ModelRequest, "instructions" | "input" | "tools">, count: Count): number {
  const tools = request.tools.reduce((n, spec) => n + count(toolText(spec)), 0);
  const input = request.input.reduce((n, item) => n + itemTokens(item, count), 0);
  return tools + count(request.instructions) + input + framingTokens(request);
}
