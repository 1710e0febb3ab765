/** The pure half of src/git/safe-git.ts: which overrides a config listing yields, and the argument shape. */
import { describe, expect, test } from "bun:test";
import { configEnvironment, driverOverrides, FIXED_OVERRIDES, parseConfigKeys, safeGitArgs } from "../../src/git/git-overrides.ts";
import { gitEnvironment } from "../../src/git/git-environment.ts";

describe("driverOverrides", () => {
  test("every filter, diff driver, merge driver and protocol a config names is disarmed, whatever its name", () => {
    const listing = "filter.Weird name=x.clean\nrun me\0filter.lfs.required\ntrue\0diff.a.b.textconv\nconv\0merge.ours.driver\nx %A\0protocol.ext.allow\nalways\0diff.external\nx\0filter.bare\0";
    const keys = parseConfigKeys(listing);
    expect(keys).toEqual(["filter.Weird name=x.clean", "filter.lfs.required", "diff.a.b.textconv", "merge.ours.driver", "protocol.ext.allow", "diff.external", "filter.bare"]);
    const overrides = Object.fromEntries(driverOverrides(keys).map((o) => [o.key, o.value]));
    expect(overrides).toEqual({
      "filter.Weird name=x.clean": "",
      "filter.Weird name=x.smudge": "",
      "filter.Weird name=x.process": "",
      "filter.Weird name=x.required": "false",
      "filter.lfs.clean": "",
      "filter.lfs.smudge": "",
      "filter.lfs.process": "",
      "filter.lfs.required": "false",
      "diff.a.b.textconv": "",
      "diff.a.b.command": "",
      "merge.ours.driver": "false",
      "protocol.ext.allow": "never",
    });
  });

  test("the overrides travel as GIT_CONFIG_COUNT/KEY/VALUE, keys verbatim", () => {
    const env = configEnvironment([...FIXED_OVERRIDES, { key: "filter.a b=c.clean", value: "" }]);
    const n = Number(env.GIT_CONFIG_COUNT);
    expect(n).toBe(FIXED_OVERRIDES.length + 1);
    expect(env[`GIT_CONFIG_KEY_${n - 1}`]).toBe("filter.a b=c.clean");
    expect(env[`GIT_CONFIG_VALUE_${n - 1}`]).toBe("");
  });
});

describe("safeGitArgs", () => {
  test("adds --no-pager and --no-optional-locks, and --no-ext-diff --no-textconv for the diff family", () => {
    expect(safeGitArgs(["status", "--porcelain"])).toEqual(["--no-pager", "--no-optional-locks", "status", "--porcelain"]);
    expect(safeGitArgs(["log", "-p"])).toEqual(["--no-pager", "--no-optional-locks", "log", "--no-ext-diff", "--no-textconv", "-p"]);
  });

  test("refuses global options, which would override the overrides", () => {
    expect(() => safeGitArgs(["-c", "core.fsmonitor=./evil", "status"])).toThrow("subcommand first");
    expect(() => safeGitArgs([])).toThrow("subcommand first");
  });
});

test("gitEnvironment keeps the allowlist only, and its fixed variables win", () => {
  const env = gitEnvironment({ PATH: "/bin", HOME: "/h", LC_CTYPE: "C.UTF-8", OPENAI_API_KEY: "sk-x", GIT_DIR: "/x", GIT_TERMINAL_PROMPT: "1", SSH_AUTH_SOCK: "/s", EDITOR: "vim" });
  expect(env).toEqual({ PATH: "/bin", HOME: "/h", LC_CTYPE: "C.UTF-8", GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "", GIT_PROXY_COMMAND: "" });
});
