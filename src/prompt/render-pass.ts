/**
 * One rendering of a request: every section of the regions rendered against a context (a
 * failing optional section is skipped and recorded), duplicates removed, the pieces assembled
 * and counted. The builder runs it once, and again after each cutoff step.
 */
import { createHash } from "node:crypto";
import type { FunctionToolSpec } from "../model/types.ts";
import { ValarmindError, describeError } from "../errors.ts";
import { dedupePieces, type Duplicate } from "./dedup.ts";
import type { Regions } from "./regions.ts";
import {
  apiOrder,
  assembleParts,
  countRequest,
  FRAMING_INSTRUCTIONS,
  FRAMING_PER_INPUT_ITEM,
  pieceTokens,
  type AssembledParts,
  type Count,
} from "./request-assembly.ts";
import type { Piece, Section, SectionContext } from "./section.ts";

export interface SectionFailure {
  id: string;
  region: string;
  error: string;
}

export interface RenderedPiece extends Piece {
  region: string;
  stable: boolean;
  required: boolean;
  tokens: number;
}

export interface Pass {
  /** In API order: tools, instructions, input. */
  pieces: RenderedPiece[];
  failures: SectionFailure[];
  duplicates: Duplicate[];
  parts: AssembledParts;
  /** Direct count of the whole request (content + framing). */
  total: number;
  /** Sum of the pieces' tokens. */
  itemTokens: number;
  stablePrefix: number;
}

function toPieces(section: Section, output: string | Piece[]): Piece[] {
  if (typeof output !== "string") return output;
  if (output === "") return [];
  const piece: Piece = {
    id: section.id,
    type: section.type,
    format: section.format,
    reason: section.reason,
    placement: section.placement,
    text: output,
  };
  if (section.role) piece.role = section.role;
  return [piece];
}

async function renderSection(region: string, section: Section, ctx: SectionContext): Promise<Piece[] | SectionFailure> {
  try {
    const pieces = toPieces(section, await section.render(ctx));
    return pieces.map((p) => ({ ...p, region, stable: section.stable, required: section.required ?? false }));
  } catch (error) {
    if (section.required) {
      throw new ValarmindError(`prompt section '${section.id}' failed: ${describeError(error)}`, {
        hint: "This section is required in every request; the turn cannot be built without it.",
        cause: error,
      });
    }
    return { id: section.id, region, error: describeError(error) };
  }
}

export async function renderPass(regions: Regions, ctx: SectionContext, tools: readonly FunctionToolSpec[], toolPieces: readonly Piece[], count: Count): Promise<Pass> {
  const rendered = await Promise.all(regions.entries().map(({ region, section }) => renderSection(region, section, ctx)));
  const failures: SectionFailure[] = [];
  const raw: Piece[] = [...toolPieces];
  for (const result of rendered) {
    if (Array.isArray(result)) raw.push(...result);
    else failures.push(result);
  }
  const { pieces: unique, duplicates } = dedupePieces(apiOrder(raw));
  const pieces = unique.map(
    (p): RenderedPiece => ({ ...p, region: p.region ?? "tools", stable: p.stable ?? true, required: p.required ?? false, tokens: pieceTokens(p, count) }),
  );
  const parts = assembleParts(pieces, tools);
  const total = countRequest(parts, count);
  const itemTokens = pieces.reduce((n, p) => n + p.tokens, 0);
  return { pieces, failures, duplicates, parts, total, itemTokens, stablePrefix: stablePrefixTokens(pieces, parts) };
}

/** Tokens (framing included) before the first volatile piece, in the order the API caches. */
function stablePrefixTokens(pieces: readonly RenderedPiece[], parts: AssembledParts): number {
  let total = 0;
  let instructionsFramed = false;
  for (const piece of pieces) {
    if (!piece.stable) break;
    total += piece.tokens;
    if (piece.placement === "instructions" && !instructionsFramed) {
      total += FRAMING_INSTRUCTIONS;
      instructionsFramed = true;
    }
    total += FRAMING_PER_INPUT_ITEM * (parts.itemsOf.get(piece.id) ?? 0);
  }
  return total;
}

export function contentHash(piece: Piece): string {
  const content = piece.items ? JSON.stringify(piece.items) : (piece.text ?? "") + (piece.images ?? []).map((image) => image.image_url).join("\n");
  return createHash("sha256").update(content).digest("hex").slice(0, 16);
}
