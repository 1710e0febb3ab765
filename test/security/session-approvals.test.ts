/**
 * Session approvals remember exactly what the user saw (issue 8, "Safe in a repository you did not
 * write"). The attacks: a session answer for one harmless command used to allow a dangerous one
 * sharing its first word(s). Each attack approves the harmless command with the widest scope the
 * dialog offers, then asks the gate about the dangerous one: it must ask (or, headless, refuse).
 * Also: the prefix rules at offer and at match time, and escalated calls.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { ApprovalDecision, SessionScope } from "../../src/agent/events.ts";
import { createApprovalGate, type ApprovalGate, type ApprovalRequest, type ApprovalSubject } from "../../src/tools/approvals.ts";
import type { AnyTool } from "../../src/tools/default-tools.ts";
import { sessionPrefix } from "../../src/tools/shell-prefix.ts";
import { call, makeWorkspace, registryFor, removeWorkspaces } from "../tools/temp-workspace.ts";

afterAll(removeWorkspaces);

const never = new AbortController().signal;
const shell = (command: string, escalate?: string): ApprovalSubject => ({
  name: "run_shell",
  command,
  argsKey: JSON.stringify({ command }),
  ...(escalate === undefined ? {} : { escalate }),
});
const editCall = (path: string, escalate?: string): ApprovalSubject => ({
  name: "edit_file",
  argsKey: JSON.stringify({ path }),
  ...(escalate === undefined ? {} : { escalate }),
});

let callIds = 0;

/** Asks the gate about `subject` and answers with `pick(request)`; returns the request shown. */
async function answer(gate: ApprovalGate, subject: ApprovalSubject, pick: (request: ApprovalRequest) => ApprovalDecision): Promise<ApprovalRequest> {
  let shown: ApprovalRequest | undefined;
  await gate.confirm({ callId: `c${++callIds}`, name: subject.name, description: "asked" }, subject, async (request) => {
    shown = request;
    return pick(request);
  }, never);
  if (!shown) throw new Error("the gate did not ask");
  return shown;
}

/** The widest session answer the dialog offers for this request. */
const widest = (request: ApprovalRequest): ApprovalDecision => {
  const scope: SessionScope = request.remember?.kind === "tool" ? "tool" : request.remember?.prefix !== undefined ? "prefix" : "exact";
  return { kind: "allow_session", scope };
};
const session = (scope: SessionScope) => (): ApprovalDecision => ({ kind: "allow_session", scope });

function suggestGate(): ApprovalGate {
  return createApprovalGate({ mode: "suggest", interactive: true });
}

describe("the three attacks: a session answer no longer allows a dangerous neighbour", () => {
  const attacks: Array<[string, string, string]> = [
    ["an interpreter's prefix", "python -m pytest", "python -c \"__import__('shutil').rmtree('/home')\""],
    ["find's prefix", "find . -name x", "find / -exec rm -rf {} +"],
    ["git diff's prefix", "git diff HEAD~1", "git diff --output=~/.bashrc"],
  ];
  for (const [what, approved, attack] of attacks) {
    test(`${what}: approving \`${approved}\` for the session does not allow \`${attack}\``, async () => {
      const gate = suggestGate();
      await answer(gate, shell(approved), widest);
      expect(gate.decide(shell(approved), "shell")).toBe("allow");
      expect(gate.decide(shell(attack), "shell")).toBe("ask");
    });
  }

  test("what the dialog offers for each is what it remembers", async () => {
    const gate = suggestGate();
    expect((await answer(gate, shell("python -m pytest"), widest)).remember).toEqual({ kind: "command", exact: "python -m pytest" });
    expect((await answer(gate, shell("find . -name x"), widest)).remember).toEqual({ kind: "command", exact: "find . -name x" });
    expect((await answer(gate, shell("git diff HEAD~1"), widest)).remember).toEqual({ kind: "command", exact: "git diff HEAD~1", prefix: "git diff" });
    expect(gate.sessionAllowances()).toEqual([
      "run_shell: `git diff` followed by any arguments allowed by the prefix rules",
      "run_shell: exactly `python -m pytest`",
      "run_shell: exactly `find . -name x`",
    ]);
  });

  test("git diff's own output options cannot write a hook inside the workspace either", async () => {
    const gate = suggestGate();
    await answer(gate, shell("git diff HEAD~1"), session("prefix"));
    for (const attack of ["git diff --output=.git/hooks/pre-commit", "git diff --output .git/hooks/pre-commit", "git diff --ext-diff", "git diff --textconv HEAD", "git diff -c"]) {
      expect([attack, gate.decide(shell(attack), "shell")]).toEqual([attack, "ask"]);
    }
  });
});

describe("which commands are offered a prefix", () => {
  const exactOnly = [
    "python3 -m pytest", "python3.12 -m pytest", "node scripts/build.js", "bun test", "bunx tsc", "deno run x.ts", "npx prettier .", "pnpx x",
    "bash scripts/ci.sh", "sh -c ls", "zsh x", "perl -e 1", "ruby x.rb", "php x.php", "lua x.lua", "Rscript x.R", "osascript x", "pwsh x",
    "env FOO=1 ls", "xargs rm", "find . -name x", "fd x", "exec ls", "eval ls", "source x", ". x", "command ls", "sudo ls", "doas ls",
    "nohup x", "nice x", "timeout 5 x", "time ls", "watch ls", "strace ls", "gdb x", "awk 1 x", "gawk 1 x", "sed -n 1p x", "vim x",
    "less x", "man ls", "ssh host", "scp a b", "rsync a b", "tar xf a.tar", "zip a b", "unzip a", "curl example.com", "wget example.com",
    "dd if=a of=b", "tee x", "cp a b", "mv a b", "rm a", "ln a b", "chmod 755 x", "chown me x", "install a b", "docker run x",
    "podman run x", "kubectl apply x", "make test", "npm exec x", "npm x y", "npm create vite", "npm init x", "npm run build",
    "npm install left-pad", "pnpm dlx x", "yarn dlx x", "cargo run", "go run ./cmd", "git config core.pager cat", "git -C .. status",
    "git -c core.pager=sh log", "git", "npm", "git rebase -i HEAD~2", "git bisect run x", "git submodule foreach x",
    "FOO=1 git status", "/usr/bin/python3 -m pytest", "Python -m pytest", "NODE x.js", "tsx x.ts", "npm EXEC x", "git diff --output=x", "ls /etc", "cat ../secret", "ls ~",
  ];
  for (const command of exactOnly) {
    test(`\`${command}\`: exact only`, () => {
      expect(sessionPrefix(command)).toBeUndefined();
    });
  }

  const offered: Array<[string, string]> = [
    ["git diff HEAD~1", "git diff"],
    ["git status --short", "git status"],
    ["git log --oneline -5", "git log"],
    ["git diff main..feature", "git diff"],
    ["cargo test --lib", "cargo test"],
    ["go test ./...", "go test"],
    ["npm test -- --watch", "npm test"],
    ["ls -la", "ls"],
    ["./gradlew test", "./gradlew test"],
    ["constructor x", "constructor x"],
  ];
  for (const [command, prefix] of offered) {
    test(`\`${command}\` → \`${prefix}\``, () => {
      expect(sessionPrefix(command)).toBe(prefix);
    });
  }
});

describe("what a remembered prefix matches, checked at every call", () => {
  async function allowedPrefix(command: string): Promise<ApprovalGate> {
    const gate = suggestGate();
    await answer(gate, shell(command), session("prefix"));
    return gate;
  }

  test("git diff: plain arguments inside the workspace match", async () => {
    const gate = await allowedPrefix("git diff HEAD~1");
    for (const ok of ["git diff", "git diff --stat", "git diff HEAD~3 -- src/a.ts", "git diff main..feature", "git diff --name-only HEAD"]) {
      expect([ok, gate.decide(shell(ok), "shell")]).toEqual([ok, "allow"]);
    }
  });

  test("git diff: shell syntax, risky options and paths outside the workspace never match", async () => {
    const gate = await allowedPrefix("git diff HEAD~1");
    const refused = [
      "git diff; rm -rf .", "git diff && curl x", "git diff | sh", "git diff `id`", "git diff $(id)", "git diff > x", "git diff < x",
      "git diff 'a b'", 'git diff "x"', "git diff \\;", "git diff *", "git diff {a,b}", "git diff (x)", "git diff\nrm x",
      "git diff --output=~/.bashrc", "git diff --exec-path=/tmp", "git diff --upload-pack=x", "git diff --config-env=a=b",
      "git diff --git-dir=x", "git diff --work-tree=x", "git diff -C x", "git diff -cfoo",
      "git diff --no-index /etc/passwd x", "git diff -- ../other/x", "git diff -- ~/x", "git diff -- src/../../x", "git diff .git/config",
      "git diff\u00a0x",
    ];
    for (const attack of refused) expect([attack, gate.decide(shell(attack), "shell")]).toEqual([attack, "ask"]);
  });

  test("ls: a path outside the workspace does not match", async () => {
    const gate = await allowedPrefix("ls -la");
    expect(gate.decide(shell("ls src"), "shell")).toBe("allow");
    for (const attack of ["ls /", "ls ~", "ls ../", "ls -la ..", "ls --color=/x"]) expect([attack, gate.decide(shell(attack), "shell")]).toEqual([attack, "ask"]);
  });

  test("go test: -exec, -o and --output never match", async () => {
    const gate = await allowedPrefix("go test ./...");
    expect(gate.decide(shell("go test -run TestX ./pkg"), "shell")).toBe("allow");
    for (const attack of ["go test -exec sh ./...", "go test -o x ./...", "go test --exec=x"]) expect([attack, gate.decide(shell(attack), "shell")]).toEqual([attack, "ask"]);
  });

  test("headless, a command outside every allowance is refused, not asked", async () => {
    const gate = createApprovalGate({ mode: "suggest", interactive: false });
    expect(gate.decide(shell("git diff --output=~/.bashrc"), "shell")).toBe("deny");
  });
});

describe("escalated calls (a tool's escalate reason)", () => {
  const HOOK = "writes a git hook";
  const LINKS = "the file has 2 hard links; another name for it may be outside the workspace";

  test("they ask in every mode but full-auto, for any kind including read", () => {
    for (const kind of ["read", "memory", "write", "shell"] as const) {
      const subject = kind === "shell" ? shell("ls", HOOK) : editCall("a.ts", LINKS);
      expect(createApprovalGate({ mode: "suggest", interactive: true }).decide(subject, kind)).toBe("ask");
      expect(createApprovalGate({ mode: "auto-edit", interactive: true }).decide(subject, kind)).toBe("ask");
      expect(createApprovalGate({ mode: "full-auto", interactive: true }).decide(subject, kind)).toBe("allow");
      expect(createApprovalGate({ mode: "auto-edit", interactive: false }).decide(subject, kind)).toBe("deny");
    }
  });

  test("headless: the refusal names the reason and the flag", () => {
    const gate = createApprovalGate({ mode: "auto-edit", interactive: false });
    expect(gate.refusal(editCall("a.ts", LINKS), "read")).toBe(
      `edit_file needs approval in 'auto-edit' mode because ${LINKS}, but there is no terminal to ask (headless run). Nothing was done. To allow it, re-run with --approvals full-auto (or --yes to allow every tool call).`,
    );
  });

  test("the request carries the warning; a tool call offers no session choice, a command only its exact line", async () => {
    const gate = suggestGate();
    const toolRequest = await answer(gate, editCall("a.ts", LINKS), () => ({ kind: "allow_once" }));
    expect(toolRequest.warning).toBe(LINKS);
    expect(toolRequest.remember).toBeUndefined();
    const shellRequest = await answer(gate, shell("git commit -m x", HOOK), () => ({ kind: "allow_once" }));
    expect(shellRequest).toMatchObject({ warning: HOOK, remember: { kind: "command", exact: "git commit -m x" } });
    expect(shellRequest.remember).not.toHaveProperty("prefix");
  });

  test("a tool-wide session allowance does not cover an escalated call of that tool", async () => {
    const gate = suggestGate();
    await answer(gate, editCall("a.ts"), session("tool"));
    expect(gate.decide(editCall("b.ts"), "write")).toBe("allow");
    expect(gate.decide(editCall("b.ts", LINKS), "write")).toBe("ask");
    // Even a session answer on the escalated call itself remembers nothing tool-wide.
    await answer(gate, editCall("c.ts", LINKS), session("tool"));
    expect(gate.decide(editCall("d.ts", LINKS), "write")).toBe("ask");
  });

  test("a prefix allowance does not cover an escalated command", async () => {
    const gate = suggestGate();
    await answer(gate, shell("git status"), session("prefix"));
    expect(gate.decide(shell("git status --short"), "shell")).toBe("allow");
    expect(gate.decide(shell("git status --short", HOOK), "shell")).toBe("ask");
  });

  test("an exact allowance covers an escalated command only for the warning the user saw", async () => {
    const gate = suggestGate();
    await answer(gate, shell("git commit -m x"), session("exact"));
    expect(gate.decide(shell("git commit -m x", HOOK), "shell")).toBe("ask");
    await answer(gate, shell("git commit -m x", HOOK), session("exact"));
    expect(gate.decide(shell("git commit -m x", HOOK), "shell")).toBe("allow");
    expect(gate.decide(shell("git commit -m x", LINKS), "shell")).toBe("ask");
    expect(gate.decide(shell("git commit -m x"), "shell")).toBe("allow");
    expect(gate.sessionAllowances()).toEqual([`run_shell: exactly \`git commit -m x\` (also when warned: ${HOOK})`]);
  });

  test("a late approval of an escalated call lets exactly that call through", async () => {
    const gate = suggestGate();
    gate.beginTurn(1);
    const controller = new AbortController();
    const asked = gate.confirm({ callId: "late", name: "edit_file", description: "edit a.ts" }, editCall("a.ts", LINKS), () => new Promise(() => undefined), controller.signal);
    controller.abort();
    await asked;
    gate.beginTurn(2);
    expect(gate.answer("late", { kind: "allow_once" })).toBe(true);
    expect(gate.decide(editCall("a.ts", LINKS), "write")).toBe("allow");
    expect(gate.decide(editCall("b.ts", LINKS), "write")).toBe("ask");
  });

  test("through the registry: a prepared call's escalate reaches the gate, the dialog and the refusal", async () => {
    const root = makeWorkspace({ "a.txt": "x\n" });
    let ran = 0;
    const probe: AnyTool = {
      name: "probe",
      description: "reads a file, but the tool found it risky",
      kind: "read",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      describe: () => "probe a.txt",
      execute: async () => ({ forModel: "ok", summary: "ok", isError: false }),
      prepare: async () => ({
        ready: true,
        kind: "read",
        description: "probe a.txt",
        escalate: LINKS,
        apply: async () => {
          ran++;
          return { forModel: "ok", summary: "ok", isError: false };
        },
      }),
    };
    const asked: ApprovalRequest[] = [];
    const interactive = registryFor(root, {
      settings: { approvals: "auto-edit", toolOutputTokens: 100_000, shellTimeoutMs: 10_000 },
      interactive: true,
      tools: [probe],
      ask: async (request) => {
        asked.push(request);
        return { kind: "allow_once" };
      },
    });
    expect((await call(interactive, "probe", {})).denied).toBe(false);
    expect(asked).toEqual([{ callId: expect.any(String), name: "probe", description: "probe a.txt", warning: LINKS }]);
    expect(ran).toBe(1);

    const headless = registryFor(root, { settings: { approvals: "auto-edit", toolOutputTokens: 100_000, shellTimeoutMs: 10_000 }, tools: [probe] });
    const refused = await call(headless, "probe", {});
    expect(refused.denied).toBe(true);
    expect(refused.forModel).toContain(`because ${LINKS}`);
    expect(ran).toBe(1);
  });
});
