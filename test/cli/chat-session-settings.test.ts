/**
 * Each session holds its own copy of the settings: `/model` changes the current session only, and
 * `/clear` (a new session) starts again from the configured model.
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { SessionChatController } from "../../src/cli/chat/chat-controller.ts";
import { fakeModel, makeGitWorkspace, testSettings } from "../agent/support/agent-harness.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  root = await makeGitWorkspace({ "README.md": "# demo\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

async function runTurn(controller: SessionChatController, text: string): Promise<void> {
  for await (const _event of controller.submit(text, new AbortController().signal)) {
    // drained: the turn and its settle step run to the end
  }
}

function requestedModels(): unknown[] {
  return server.requests.map((request) => request.body.model);
}

test("/model changes the current session only; after /clear the configured model is back", async () => {
  const settings = testSettings({ model: "gpt-configured" });
  const controller = await SessionChatController.open({
    root,
    settings,
    model: fakeModel(server),
    interactive: true,
    resume: { kind: "new" },
    warnings: [],
  });
  try {
    const set = await controller.runCommand("model", "gpt-switched");
    expect(set.isError).toBeFalsy();
    expect(controller.status().model).toBe("gpt-switched");
    server.enqueue(textStream("first answer"));
    await runTurn(controller, "hello");
    expect(requestedModels()).toEqual(["gpt-switched"]);

    const cleared = await controller.runCommand("clear", "");
    expect(cleared.isError).toBeFalsy();
    expect(controller.status().model).toBe("gpt-configured");
    expect((await controller.runCommand("model", "")).lines).toEqual(["model: gpt-configured"]);
    server.enqueue(textStream("second answer"));
    await runTurn(controller, "hello again");
    expect(requestedModels()).toEqual(["gpt-switched", "gpt-configured"]);
    // The caller's settings object is never written to.
    expect(settings.model).toBe("gpt-configured");
  } finally {
    await controller.close();
  }
});
