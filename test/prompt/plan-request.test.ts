/**
 * The builder is pure (issue 11): a build that needs the window folded returns the fold as data
 * (`planRequest`), never calls a summarizer; given that fold, it builds the same request and
 * manifest as the offline build that folds by itself.
 */
import { describe, expect, test } from "bun:test";
import { ExtractiveSummarizer, foldTurns } from "../../src/memory/summary.ts";
import { buildRequest, planRequest, type BlockFold } from "../../src/prompt/builder.ts";
import { fullInput } from "./support/build-fixture.ts";

async function foldingBudget(): Promise<number> {
  const full = (await buildRequest(await fullInput())).manifest.total_tokens;
  const trimmed = (await buildRequest(await fullInput({ budgetTokens: full - 100 }))).manifest.total_tokens;
  return trimmed - 300;
}

describe("planRequest", () => {
  test("within budget: the request, as buildRequest builds it", async () => {
    const plan = await planRequest(await fullInput());
    expect(plan.kind).toBe("request");
    if (plan.kind === "request") expect(plan.built.request).toEqual((await buildRequest(await fullInput())).request);
  });

  test("over budget with the window to fold: the oldest block as a plan; with that fold, the offline build exactly", async () => {
    const input = await fullInput({ budgetTokens: await foldingBudget() });
    const before = JSON.stringify(input);
    const plan = await planRequest(input);
    expect(plan.kind).toBe("fold");
    if (plan.kind !== "fold") return;
    expect(plan.turns.map((t) => t.turn)).toEqual([17, 18, 19, 20, 21, 22, 23, 24]);
    expect(plan.previous).toEqual(input.memory?.summary);
    expect(JSON.stringify(input)).toBe(before);

    // The session's fold step, here with the offline summarizer so the two builds can be compared.
    const offline = new ExtractiveSummarizer();
    const fold: BlockFold = { summary: await foldTurns(plan.previous, plan.turns, offline), summarizer: offline.name, note: "" };
    const again = await planRequest({ ...input, folds: [fold] });
    expect(again.kind).toBe("request");
    if (again.kind !== "request") return;
    const offlineBuild = await buildRequest(input);
    expect(again.built.request).toEqual(offlineBuild.request);
    expect(again.built.manifest.cutoff_steps).toEqual(offlineBuild.manifest.cutoff_steps);
    expect(again.built.manifest.dropped).toEqual(offlineBuild.manifest.dropped);
    expect(again.built.changes).toEqual(offlineBuild.changes);
  });
});
