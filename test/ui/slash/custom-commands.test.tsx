/**
 * The REPL and custom commands (`runs: "prompt"` in the catalogue the controller gives it): they
 * complete and show in /help like any command, and typing one sends it as a message through
 * `submit` (the core expands it), never through `runCommand`.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { cleanup } from "ink-testing-library";
import { catalogWithCustomCommands } from "../../../src/agent/slash-catalog.ts";
import { KEYS, renderApp, waitUntil } from "../ink-harness.tsx";

afterEach(() => cleanup());

const commands = catalogWithCustomCommands([
  { name: "review-pr", description: "review the open pull request", body: "Review $ARGUMENTS", scope: "user", file: "/home/u/.config/valarmind/commands/review-pr.md" },
]);

describe("custom commands in the REPL", () => {
  test("completion offers one by its usage; sent, it goes to submit as typed, not to runCommand", async () => {
    const h = renderApp({ commands });
    await h.see("Ask anything");
    await h.keys("/revi");
    await h.see("/review-pr [ARGS]");
    expect(h.frame()).toContain("review the open pull request (user command)");
    await h.keys(KEYS.tab, "#42", KEYS.enter);
    await waitUntil(() => h.controller.submitted.length === 1, "the submit", h.frame);
    expect(h.controller.submitted).toEqual(["/review-pr #42"]);
    expect(h.controller.commandsRun).toEqual([]);
  });

  test("/help lists it with the built-in commands", async () => {
    const h = renderApp({ commands });
    await h.see("Ask anything");
    await h.keys("/help", KEYS.enter);
    await h.see("/review-pr [ARGS]");
    expect(h.screen()).toContain("/resume [ID]");
    expect(h.controller.submitted).toEqual([]);
  });
});
