import { describe, expect, test } from "bun:test";
import { BudgetExceededError, budgetShares } from "../../src/prompt/budget-error.ts";
import { buildRequest, exactCounter } from "../../src/prompt/builder.ts";
import { summaryRequestRegions } from "../../src/prompt/standard-regions.ts";
import type { Manifest } from "../../src/prompt/manifest-schema.ts";
import { STATE_TOKEN_FLOOR } from "../../src/state/projection.ts";
import { fullInput, SETTINGS } from "./support/build-fixture.ts";
import { syntheticWorkingSet } from "./support/synthetic-session.ts";

const tokensOf = (m: Manifest, id: string) => m.items.find((i) => i.id === id)?.tokens ?? 0;

describe("cutoff policy", () => {
  test("within budget nothing is cut", async () => {
    const { manifest, changes } = await buildRequest(await fullInput());
    expect(manifest.cutoff_steps).toEqual([]);
    expect(manifest.total_tokens).toBeLessThanOrEqual(manifest.budget_tokens);
    expect(changes).toEqual({});
  });

  test("step 1 trims the state projection from its cap to its floor", async () => {
    const full = (await buildRequest(await fullInput())).manifest;
    const budget = full.total_tokens - 100;
    const { manifest, changes } = await buildRequest(await fullInput({ budgetTokens: budget }));
    expect(manifest.cutoff_steps.map((s) => s.step)).toEqual(["trim_state"]);
    expect(tokensOf(manifest, "working_state")).toBeLessThanOrEqual(STATE_TOKEN_FLOOR + 20);
    expect(manifest.total_tokens).toBeLessThanOrEqual(budget);
    expect(manifest.dropped.filter((d) => d.reason === "state_cap").length).toBeGreaterThan(0);
    expect(changes).toEqual({});
  });

  test("step 2 folds the oldest window block into the summary, recorded turn by turn", async () => {
    const trimmed = (await buildRequest(await fullInput({ budgetTokens: (await buildRequest(await fullInput())).manifest.total_tokens - 100 }))).manifest;
    const budget = trimmed.total_tokens - 300;
    const { manifest, changes, request } = await buildRequest(await fullInput({ budgetTokens: budget }));
    // The fold frees enough that the trimmed state comes back whole.
    expect(manifest.cutoff_steps.map((s) => s.step)).toEqual(["trim_state", "fold_window", "restore_state"]);
    expect(manifest.cutoff_steps[1]?.detail).toBe("turns 17–24 folded into the summary (extractive)");
    const folded = manifest.dropped.filter((d) => d.reason === "folded_into_summary").map((d) => d.id);
    expect(folded).toEqual([17, 18, 19, 20, 21, 22, 23, 24].map((n) => `turn:${n}`));
    expect(manifest.items.some((i) => i.id === "turn:17")).toBe(false);
    expect(changes.fold).toMatchObject({ throughTurn: 24, summarizer: "extractive", summary: { fromTurn: 1, throughTurn: 24 } });
    const summary = request.input[0]?.type === "message" ? request.input[0].content : "";
    expect(summary).toContain("(turns 1–24)");
    expect(summary).toContain("T24 user:");
    expect(manifest.total_tokens).toBeLessThanOrEqual(budget);
  });

  test("step 3 evicts working-set items by the overflow policy (priority: lowest effective first)", async () => {
    const count = await exactCounter();
    const base = await fullInput();
    if (!base.memory) throw new Error("fixture has memory");
    const items = syntheticWorkingSet(10, count);
    const input = await fullInput({ memory: { ...base.memory, turns: [], summary: undefined, workingSet: items }, sources: {} });
    const full = (await buildRequest(input)).manifest;
    const budget = full.total_tokens - 150;
    const { manifest, changes } = await buildRequest({ ...input, budgetTokens: budget });
    expect(manifest.cutoff_steps.map((s) => s.step)).toEqual(["evict_working_set"]);
    const evicted = manifest.dropped.filter((d) => d.reason === "evicted");
    expect(evicted.length).toBeGreaterThan(0);
    // Priorities cycle 0.3..0.9; the attention files are src/lexer.ts (from the message): lowest effective go first.
    expect(evicted[0]?.id).toBe("ws:ws-item-1");
    expect(evicted[0]?.detail).toContain("policy priority");
    expect(changes.workingSet?.items.length).toBe(10 - evicted.length);
    expect(changes.workingSet?.events.every((e) => e.type === "evicted")).toBe(true);
    expect(manifest.memory_events.filter((e) => e.type === "evicted").length).toBe(evicted.length);
  });

  test("step 3 under SUMMARIZE condenses items instead of dropping them", async () => {
    const count = await exactCounter();
    const base = await fullInput();
    if (!base.memory) throw new Error("fixture has memory");
    const items = syntheticWorkingSet(10, count);
    const input = await fullInput({ memory: { ...base.memory, turns: [], summary: undefined, workingSet: items, overflowPolicy: "summarize" }, sources: {} });
    const full = (await buildRequest(input)).manifest;
    const { manifest, changes } = await buildRequest({ ...input, budgetTokens: full.total_tokens - 100 });
    expect(manifest.dropped.some((d) => d.reason === "condensed")).toBe(true);
    expect(changes.workingSet?.items.some((i) => i.source === "summary")).toBe(true);
  });

  test("step 4 shortens long tool outputs head+tail, halving the cap", async () => {
    const big = Array.from({ length: 400 }, (_, i) => `row ${i}: ${"data ".repeat(8)}end`).join("\n");
    const input = await fullInput({
      sources: {},
      memory: { summary: undefined, turns: [], workingSet: [], overflowPolicy: "fifo", touchedFiles: [], touchedSymbols: [], events: [] },
      task: { userText: "look", items: [{ kind: "tool", callId: "c1", name: "read_file", arguments: '{"path":"x"}', output: big, isError: false }] },
    });
    const full = (await buildRequest(input)).manifest;
    const { manifest, request } = await buildRequest({ ...input, budgetTokens: full.total_tokens - 900 });
    expect(manifest.cutoff_steps.map((s) => s.step)).toEqual(["shorten_tool_outputs"]);
    const cap = Number(/≤(\d+) tokens/.exec(manifest.cutoff_steps[0]?.detail ?? "")?.[1]);
    expect(cap).toBeLessThanOrEqual(1000);
    expect(manifest.dropped).toContainEqual(expect.objectContaining({ id: "task:call:c1", reason: "shortened_head_tail" }));
    const output = request.input.find((i) => i.type === "function_call_output");
    const text = output?.type === "function_call_output" ? output.output : "";
    expect(text).toStartWith("row 0:");
    expect(text).toEndWith("row 399: data data data data data data data data end");
    expect(text).toContain("tokens omitted");
  });

  test("the steps run in order and each is recorded with tokens before and after", async () => {
    const { manifest } = await buildRequest(await fullInput({ budgetTokens: 2500 }));
    const steps = manifest.cutoff_steps.map((s) => s.step);
    expect(steps.slice(0, 4)).toEqual(["trim_state", "fold_window", "fold_window", "fold_window"]);
    expect(steps).toContain("evict_working_set");
    // Every step shrinks the request, but restore_state, which gives the state back what later steps freed.
    for (const step of manifest.cutoff_steps.filter((s) => s.step !== "restore_state")) expect(step.tokens_after).toBeLessThanOrEqual(step.tokens_before);
    for (const step of manifest.cutoff_steps) expect(step.tokens_after).toBeLessThanOrEqual(step.tokens_before === step.tokens_after ? step.tokens_after : Math.max(step.tokens_before, 2500));
    expect(manifest.total_tokens).toBeLessThanOrEqual(2500);
    // Never cut: core rules and the current message.
    expect(manifest.items.map((i) => i.id)).toContain("core_rules");
    expect(manifest.items.map((i) => i.id)).toContain("task:message");
  });

  test("core rules, tools and the message alone over budget: a clear error, nothing cut", async () => {
    const input = await fullInput({ budgetTokens: 300 });
    const error = await buildRequest(input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect((error as Error).message).toMatch(/^the core rules, the tools and the current message need \d+ tokens, over the budget of 300/);
    expect((error as BudgetExceededError).hint).toContain("maxContextTokens");
  });

  test("still over after every step: the error names what is largest", async () => {
    const huge = "Follow this rule carefully in every single change you make to the code.\n".repeat(900);
    const input = await fullInput({ sources: { project: { path: "VALARMIND.md", text: huge } }, budgetTokens: 8000 });
    const error = await buildRequest(input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect((error as Error).message).toContain("after every cutoff step");
    expect((error as BudgetExceededError).largest[0]?.id).toBe("project_instructions");
  });

  test("budget shares: tools by source and this turn's steps are groups; other pieces stand alone; largest first", () => {
    const piece = (id: string, tokens: number, type = "text", placement = "instructions") => ({ id, type, placement, tokens });
    const shares = budgetShares([
      piece("core_rules", 400),
      piece("tool:read_file", 100, "tool", "tools"),
      piece("tool:run_shell", 150, "tool", "tools"),
      piece("tool:mcp__gh__list_issues", 300, "tool", "tools"),
      piece("tool:mcp__gh__create_issue", 350, "tool", "tools"),
      piece("tool:mcp__fs__read", 90, "tool", "tools"),
      piece("task:call:c1", 200, "task_step", "items"),
      piece("task:output:c1", 700, "task_step", "items"),
    ]);
    expect(shares).toEqual([
      { id: "turn_steps", tokens: 900, pieces: 2 },
      { id: "mcp:gh", tokens: 650, pieces: 2 },
      { id: "core_rules", tokens: 400 },
      { id: "tools", tokens: 250, pieces: 2 },
      { id: "mcp:fs", tokens: 90, pieces: 1 },
    ]);
  });

  test("tool definitions count per source: an MCP server's many tools are named as one share, with what to do", async () => {
    const base = await fullInput({ budgetTokens: 2500 });
    const docs = (name: string) => ({ type: "function" as const, name: `mcp__docs__${name}`, description: `Search the ${name} part of the docs. `.repeat(12), parameters: { type: "object", properties: { query: { type: "string" } } }, strict: false });
    const input = { ...base, tools: [...(base.tools ?? []), ...Array.from({ length: 12 }, (_, i) => docs(`section_${i}`))] };
    const error = await buildRequest(input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExceededError);
    const shares = (error as BudgetExceededError).largest;
    // One share for the server's 12 tools, the largest; no single tool listed.
    expect(shares[0]).toMatchObject({ id: "mcp:docs", pieces: 12 });
    expect(shares.some((s) => s.id.startsWith("tool:"))).toBe(false);
    expect((error as Error).message).toMatch(/largest: MCP server docs \(12 tools\) \d+, /);
    expect((error as BudgetExceededError).hint).toContain("mcpServers.docs");
  });

  test("last resort: a message over what the budget leaves is cut head+tail with a note, after the summary and state go", async () => {
    const paste = Array.from({ length: 400 }, (_, i) => `line ${i}: GET /links status=200 ms=${i % 97}`).join("\n");
    const input = await fullInput({ task: { userText: `HEAD-MARK ${paste} TAIL-MARK`, items: [] }, budgetTokens: 3500 });
    const { manifest, request } = await buildRequest(input);
    const steps = manifest.cutoff_steps.map((s) => s.step);
    const lastResort = [...new Set(steps.filter((s) => ["trim_context", "shorten_summary", "drop_state", "shorten_message"].includes(s)))];
    expect(lastResort).toEqual(["trim_context", "shorten_summary", "drop_state", "shorten_message"]);
    expect(steps.at(-1)).toBe("shorten_message");
    expect(manifest.total_tokens).toBeLessThanOrEqual(3500);
    expect(manifest.dropped).toContainEqual(expect.objectContaining({ id: "task:message", reason: "shortened_head_tail" }));
    const message = JSON.stringify(request.input.find((item) => JSON.stringify(item).includes("HEAD-MARK")) ?? null);
    expect(message).toContain("HEAD-MARK");
    expect(message).toContain("TAIL-MARK");
    expect(message).toContain("tokens omitted");
    expect(message).toContain("its middle was cut");
    expect(manifest.items.map((i) => i.id)).toContain("core_rules");
  });

  test("last resort: a summary a little over what the budget leaves is cut head+tail to fit, not left out", async () => {
    const text = Array.from({ length: 300 }, (_, i) => `- turn ${i + 1}: the user asked about the ${i % 7 === 0 ? "parser" : "router"} and we agreed on step ${i}.`).join("\n");
    const memory = { summary: { text, fromTurn: 1, throughTurn: 300 }, turns: [], workingSet: [], overflowPolicy: "fifo" as const, touchedFiles: [], touchedSymbols: [], events: [] };
    const whole = (await buildRequest(await fullInput({ memory, sources: {} }))).manifest;
    const summaryTokens = tokensOf(whole, "summary");
    expect(summaryTokens).toBeGreaterThan(4000);
    // 50 and 200 tokens short: the cap must leave room for the block's tags and turn range, or the
    // cut lands just over the budget and the whole summary is left out (as it once was).
    for (const short of [50, 200]) {
      const budget = whole.total_tokens - short;
      const { manifest, request } = await buildRequest(await fullInput({ memory, sources: {}, budgetTokens: budget }));
      expect(manifest.total_tokens).toBeLessThanOrEqual(budget);
      expect(manifest.cutoff_steps.map((s) => s.detail)).toEqual([expect.stringMatching(/^rolling summary cut head\+tail to ≤\d+ tokens$/)]);
      expect(tokensOf(manifest, "summary")).toBeGreaterThan(summaryTokens - short - 400);
      const sent = JSON.stringify(request.input);
      expect(sent).toContain("- turn 1: the user asked");
      expect(sent).toContain("- turn 300: the user asked");
      expect(sent).toContain("(turns 1–300)");
    }
  });

  test("a summary request whose folded turn holds a giant paste cuts that text head+tail instead of failing", async () => {
    const paste = Array.from({ length: 600 }, (_, i) => `row ${i}: ${"data ".repeat(6)}end`).join("\n");
    const turns = [{ turn: 5, user: `START ${paste} END`, items: [{ kind: "assistant" as const, text: "Looked at it." }] }];
    const { manifest, request } = await buildRequest({
      settings: { ...SETTINGS, maxContextTokens: 1500 },
      sessionId: "test1234",
      turn: 6,
      purpose: "summary",
      regions: summaryRequestRegions(),
      evictedTurns: turns,
    });
    expect(manifest.cutoff_steps.map((s) => s.step)).toEqual(["shorten_evicted_turns"]);
    expect(manifest.total_tokens).toBeLessThanOrEqual(1500);
    expect(manifest.dropped).toContainEqual(expect.objectContaining({ id: "turn:5", reason: "shortened_head_tail" }));
    const text = JSON.stringify(request.input);
    expect(text).toContain("START");
    expect(text).toContain("END");
  });

  test("the default settings budget comes from maxContextTokens", async () => {
    const { manifest } = await buildRequest(await fullInput());
    expect(manifest.budget_tokens).toBe(SETTINGS.maxContextTokens);
  });
});
