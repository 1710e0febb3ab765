import { describe, expect, test } from "bun:test";
import { buildRequest, exactCounter } from "../../src/prompt/builder.ts";
import { DEDUP_MIN_CHARS } from "../../src/prompt/dedup.ts";
import { countRequest, FRAMING_INSTRUCTIONS, FRAMING_PER_INPUT_ITEM, FRAMING_REPLY, itemTokens, toolText } from "../../src/prompt/request-assembly.ts";
import { requestText } from "../../src/prompt/prefix-share.ts";
import { Regions } from "../../src/prompt/regions.ts";
import type { Section } from "../../src/prompt/section.ts";
import { formatLocalTime } from "../../src/prompt/sections/volatile-context.ts";
import { mainTurnRegions } from "../../src/prompt/standard-regions.ts";
import { fullInput } from "./support/build-fixture.ts";

const DATE = /\d{4}-\d{2}-\d{2}/;

describe("buildRequest: the request", () => {
  test("is stateless with store:false and a stable prompt_cache_key per session", async () => {
    const a = await buildRequest(await fullInput());
    const b = await buildRequest(await fullInput({ turn: 42, now: new Date("2026-02-01T08:00:00Z") }));
    expect(a.request.store).toBe(false);
    expect("previous_response_id" in a.request).toBe(false);
    expect(a.request.prompt_cache_key).toBe("valarmind-test1234");
    expect(b.request.prompt_cache_key).toBe(a.request.prompt_cache_key);
    expect(a.request.model).toBe("gpt-5.5");
    expect(a.request.reasoning?.effort).toBe("medium");
    expect(a.request.tools.map((t) => t.name)).toEqual(["read_file", "edit_file"]);
  });

  test("puts core rules, VALARMIND.md and VALARMIND.local.md in the instructions, in that order", async () => {
    const { request } = await buildRequest(await fullInput());
    const i = request.instructions;
    expect(i.indexOf("<core_rules>")).toBe(0);
    expect(i.indexOf("<core_rules>")).toBeLessThan(i.indexOf('<project_instructions source="VALARMIND.md">'));
    expect(i.indexOf("<project_instructions")).toBeLessThan(i.indexOf('<personal_preferences source="VALARMIND.local.md">'));
  });

  test("orders stable content first and volatile content last: the history (summary, state, working set, window), the user's message, then this turn's data", async () => {
    const { request, manifest } = await buildRequest(await fullInput());
    const firstVolatile = manifest.items.findIndex((item) => !item.stable);
    expect(firstVolatile).toBeGreaterThan(0);
    expect(manifest.items.slice(firstVolatile).every((item) => !item.stable)).toBe(true);
    expect(manifest.items.map((i) => i.region).filter((r, k, all) => all.indexOf(r) === k)).toEqual([
      "tools", "core", "project", "personal", "summary", "state", "working_set", "conversation", "task", "context",
    ]);
    // Everything in the input is data or conversation: no developer or system message at all.
    expect(request.input[0]).toMatchObject({ type: "message", role: "user" });
    expect(request.input.some((item) => item.type === "message" && (item.role === "developer" || item.role === "system"))).toBe(false);
    expect(String(request.input[0]?.type === "message" && request.input[0].content)).toStartWith("<conversation_summary");
    // The user's message closes the history; the per-turn data (working set, time, git) follows it (ADR 0074).
    const message = request.input.findIndex((item) => item.type === "message" && item.content === "Now fix the lexer in src/lexer.ts too.");
    expect(message).toBeGreaterThan(0);
    expect(request.input.slice(message + 1).every((item) => item.type === "message" && item.role === "user" && /^<(working_state_changes|volatile_context)/.test(item.content))).toBe(true);
    expect(manifest.stable_prefix_tokens).toBeGreaterThan(0);
    expect(manifest.stable_prefix_tokens).toBeLessThan(manifest.total_tokens);
  });

  test("the stable part carries no timestamp and is identical across turns and clocks", async () => {
    const a = await buildRequest(await fullInput());
    const b = await buildRequest(await fullInput({ turn: 37, now: new Date("2027-06-01T23:59:00Z"), clock: () => new Date("2027-06-01T23:59:30Z") }));
    const stable = (m: typeof a.manifest) => m.items.filter((i) => i.stable);
    expect(stable(b.manifest)).toEqual(stable(a.manifest));
    const text = requestText(a.request);
    const firstVolatile = text.indexOf("Now fix the lexer");
    expect(firstVolatile).toBeGreaterThan(0);
    // No clock before the user's message (the state's decision dates are content, not a clock).
    expect(text.slice(0, firstVolatile)).not.toContain("\ntime: ");
    expect(text.slice(0, firstVolatile)).not.toContain(formatLocalTime(new Date("2026-01-31T12:34:00Z")));
    expect(text.slice(firstVolatile)).toContain(`time: ${formatLocalTime(new Date("2026-01-31T12:34:00Z"))}`);
    const volatile = a.request.input.find((i) => i.type === "message" && i.content.includes("<volatile_context"));
    expect(volatile?.type === "message" && volatile.content).toContain("time: ");
  });

  test("is data: the inputs are not changed", async () => {
    const input = await fullInput({ budgetTokens: 6000 });
    const before = JSON.stringify({ memory: input.memory, sources: input.sources, task: input.task });
    await buildRequest(input);
    expect(JSON.stringify({ memory: input.memory, sources: input.sources, task: input.task })).toBe(before);
  });
});

describe("buildRequest: token accounting", () => {
  test("total equals a direct count of the request; items sum to it less the documented framing", async () => {
    const count = await exactCounter();
    const { request, manifest } = await buildRequest(await fullInput());
    const direct = countRequest(request, count);
    expect(manifest.total_tokens).toBe(direct);
    const itemSum = manifest.items.reduce((n, i) => n + i.tokens, 0);
    expect(manifest.total_tokens - itemSum).toBe(manifest.framing_tokens);
    // Text pieces join on o200k pre-token boundaries, so the framing is exactly the per-item constants.
    expect(manifest.framing_tokens).toBe(FRAMING_INSTRUCTIONS + FRAMING_PER_INPUT_ITEM * request.input.length + FRAMING_REPLY);
    // Independently: every string the model reads, counted separately.
    const strings = request.tools.reduce((n, t) => n + count(toolText(t)), 0) + count(request.instructions) + request.input.reduce((n, i) => n + itemTokens(i, count), 0);
    expect(itemSum).toBe(strings);
  });

  test("every item has a reason, a region and a 16-hex-digit content hash", async () => {
    const { manifest } = await buildRequest(await fullInput());
    for (const item of manifest.items) {
      expect(item.reason.length).toBeGreaterThan(0);
      expect(item.region.length).toBeGreaterThan(0);
      expect(item.hash).toMatch(/^[0-9a-f]{16}$/);
    }
    expect(new Set(manifest.items.map((i) => i.id)).size).toBe(manifest.items.length);
  });
});

describe("buildRequest: sections", () => {
  const failing: Section = {
    id: "flaky",
    region: "flaky",
    stable: false,
    placement: "message",
    role: "user",
    type: "volatile_context",
    format: "text",
    reason: "test",
    render: () => {
      throw new Error("disk on fire");
    },
  };

  test("a section that throws is skipped and recorded; the turn goes on", async () => {
    const regions = mainTurnRegions().withRegion("flaky", failing).withRegionalOrder(["core", "flaky"]);
    const { request, manifest } = await buildRequest(await fullInput({ regions }));
    expect(manifest.dropped).toContainEqual({ id: "flaky", tokens: 0, reason: "section_error", detail: "section 'flaky' (flaky) failed: disk on fire" });
    expect(request.input.at(-1)).toMatchObject({ role: "user" });
  });

  test("a required section that throws fails the build with a clear error", async () => {
    const regions = Regions.empty().withRegion("core", { ...failing, id: "core_rules", required: true });
    await expect(buildRequest(await fullInput({ regions }))).rejects.toThrow("prompt section 'core_rules' failed: disk on fire");
  });

  test("an empty section is absent, not an empty message", async () => {
    const { manifest } = await buildRequest(await fullInput({ sources: {} }));
    const ids = manifest.items.map((i) => i.id);
    expect(ids).not.toContain("project_instructions");
    expect(ids).not.toContain("personal_preferences");
    expect(ids).not.toContain("working_state");
    expect(manifest.dropped).toEqual([]);
  });
});

describe("buildRequest: no content twice", () => {
  test("a working-set item identical to earlier content is sent once and recorded", async () => {
    const snippet = "export function duplicated(x: number): number {\n  return x * 2;\n}\n".repeat(6);
    expect(snippet.length).toBeGreaterThanOrEqual(DEDUP_MIN_CHARS);
    const base = await fullInput();
    const memory = base.memory;
    if (!memory) throw new Error("fixture has memory");
    const item = { id: "dup", content: snippet, source: "read_file", priority: 0.5, tags: [], tokens: 10, added_turn: 1, accessed_turn: 1, added_at: "2026-01-31T12:00:00.000Z", accessed_at: "2026-01-31T12:00:00.000Z" };
    const input = await fullInput({
      memory: { ...memory, workingSet: [item, { ...item, id: "dup2" }] },
      task: { userText: "again", items: [{ kind: "tool", callId: "c9", name: "read_file", arguments: '{"path":"a.ts"}', output: snippet, isError: false }] },
    });
    const { request, manifest } = await buildRequest(input);
    const text = JSON.stringify(request);
    expect(text.split("export function duplicated").length - 1).toBe(6);
    expect(manifest.dropped.map((d) => [d.id, d.reason])).toEqual([
      ["ws:dup2", "duplicate"],
      ["task:call:c9/output:c9", "duplicate"],
    ]);
    const output = request.input.find((i) => i.type === "function_call_output" && i.call_id === "c9");
    expect(output).toEqual({ type: "function_call_output", call_id: "c9", output: "[identical to working set item dup above]" });
  });

  test("identical instruction files are sent once", async () => {
    const text = "# Rules\n\nAlways run the tests before saying something works. Keep changes small and focused on the task.\n".repeat(3);
    const { request, manifest } = await buildRequest(await fullInput({ sources: { project: { path: "VALARMIND.md", text }, personal: { path: "VALARMIND.local.md", text } } }));
    expect(request.instructions).not.toContain("<personal_preferences");
    expect(manifest.dropped[0]).toMatchObject({ id: "personal_preferences", reason: "duplicate", detail: "same content as project_instructions, sent once" });
  });
});

describe("buildRequest: the current turn's steps", () => {
  test("tool outputs of this turn follow the user's message, capped head+tail at toolOutputTokens", async () => {
    const big = Array.from({ length: 600 }, (_, i) => `line ${i}: ${"x".repeat(20)} value=${i * 7}`).join("\n");
    const input = await fullInput({
      settings: { model: "gpt-5.5", maxContextTokens: 60000, toolOutputTokens: 500, windowBlockTurns: 8, windowAnswerTokens: 80, reasoningEffort: "none" },
      task: { userText: "read it", items: [{ kind: "tool", callId: "c1", name: "read_file", arguments: '{"path":"big.txt"}', output: big, isError: false }] },
    });
    const count = await exactCounter();
    const { request, manifest } = await buildRequest(input);
    expect(request.reasoning).toBeUndefined();
    const tail = request.input.slice(-2);
    // The user's message, this turn's data after it, then this turn's steps (ADR 0074).
    const message = request.input.findIndex((item) => item.type === "message" && item.content === "read it");
    expect(message).toBeGreaterThan(0);
    expect(message).toBeLessThan(request.input.length - 2);
    expect(tail[0]).toMatchObject({ type: "function_call", call_id: "c1", name: "read_file" });
    const output = tail[1]?.type === "function_call_output" ? tail[1].output : "";
    expect(count(output)).toBeLessThanOrEqual(500);
    expect(output).toStartWith("line 0:");
    expect(output).toEndWith(`line 599: ${"x".repeat(20)} value=4193`);
    expect(output).toMatch(/\[… \d+ lines, \d+ tokens omitted …\]/);
    expect(manifest.items.find((i) => i.id === "task:call:c1")).toMatchObject({ type: "task_step", region: "steps" });
  });
});
