/**
 * `valarmind completion bash|zsh|fish`: the scripts come from the commander program, so every
 * command `--help` lists is in each, and they complete in the real shells: bash is required (it is
 * where valarmind is developed and tested); zsh and fish are checked where installed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";

let dir: string;
const scripts: Record<string, string> = {};
let topLevel: string[] = [];

beforeAll(async () => {
  dir = await makeTempDir("valarmind-completion-");
  for (const shell of ["bash", "zsh", "fish"]) {
    const r = await runCli(["completion", shell], { cwd: dir });
    if (r.code !== 0) throw new Error(`completion ${shell} failed (${r.code}): ${r.stderr}`);
    scripts[shell] = r.stdout;
    writeFileSync(join(dir, `valarmind.${shell}`), r.stdout);
  }
  const help = await runCli(["--help"], { cwd: dir });
  const commandsSection = help.stdout.slice(help.stdout.indexOf("Commands:"));
  topLevel = [...commandsSection.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((match) => match[1] ?? "");
});
afterAll(cleanupTempDirs);

function run(argv: string[], input?: string): { code: number; stdout: string; stderr: string } {
  const result = Bun.spawnSync(argv, { cwd: dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir }, stdin: input === undefined ? "ignore" : new TextEncoder().encode(input) });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

describe("the scripts", () => {
  test("every top-level command --help lists is in each script", () => {
    expect(topLevel).toEqual(expect.arrayContaining(["init", "state", "compact", "prompt", "chat", "sessions", "trust", "mcp", "completion"]));
    expect(topLevel).toContain("help");
    expect(topLevel.length).toBeGreaterThanOrEqual(10);
    // The program's own entry in each script: bash's word list, zsh's name:description pairs, fish's `-a NAME` lines.
    const rootLine = (script: string) => script.split("\n").find((line) => line.startsWith("    '') ")) ?? "";
    const offered: Record<string, (name: string) => boolean> = {
      bash: (name) => (/echo '([^']*)'/.exec(rootLine(scripts.bash ?? ""))?.[1] ?? "").split(" ").includes(name),
      zsh: (name) => rootLine(scripts.zsh ?? "").includes(` '${name}:`) || rootLine(scripts.zsh ?? "").includes(`('${name}:`),
      fish: (name) => (scripts.fish ?? "").includes(`complete -c valarmind -n '__valarmind_at \\'\\'' -f -a '${name}' `),
    };
    for (const shell of ["bash", "zsh", "fish"]) {
      const missing = topLevel.filter((name) => !offered[shell]?.(name));
      expect({ shell, missing }).toEqual({ shell, missing: [] });
    }
  });

  test("an unknown shell is a usage error naming the choices", async () => {
    const r = await runCli(["completion", "powershell"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("bash, zsh, fish");
  });
});

describe("bash", () => {
  /** Calls the completion function as bash does: COMP_WORDS and COMP_CWORD set, COMPREPLY read back. */
  function complete(...words: string[]): string[] {
    const script = `
source ${JSON.stringify(join(dir, "valarmind.bash"))}
complete -p valarmind
COMP_WORDS=(${words.map((word) => `'${word}'`).join(" ")})
COMP_CWORD=${words.length - 1}
COMP_LINE="\${COMP_WORDS[*]}"
COMP_POINT=\${#COMP_LINE}
"$(complete -p valarmind | sed -E 's/.* -F ([^ ]+) .*/\\1/')" valarmind "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\\n' "\${COMPREPLY[@]}"
`;
    const r = run(["bash", "--noprofile", "--norc", "-s"], script);
    if (r.code !== 0 || r.stderr !== "") throw new Error(`bash failed (${r.code}): ${r.stderr}`);
    const [registration, ...replies] = r.stdout.trimEnd().split("\n");
    expect(registration).toBe("complete -o default -F _valarmind valarmind");
    return replies.filter((line) => line !== "");
  }

  test("completes commands, subcommands and options, skipping option values", () => {
    expect(complete("valarmind", "ch")).toEqual(["chat"]);
    expect(complete("valarmind", "chat", "--out")).toEqual(["--output-format"]);
    expect(complete("valarmind", "chat", "-p", "hello", "--mo")).toEqual(["--model"]);
    expect(complete("valarmind", "-C", "/tmp", "state", "task", "")).toEqual(["add", "update", "done", "block", "help"]);
    expect(complete("valarmind", "mcp", "add", "--u")).toEqual(["--url"]);
    expect(complete("valarmind", "completion", "")).toEqual(["bash", "zsh", "fish"]);
  });

  test("a value with no known choices gets nothing, so bash falls back to file names", () => {
    expect(complete("valarmind", "chat", "--image", "")).toEqual([]);
  });
});

describe("zsh", () => {
  test.skipIf(Bun.which("zsh") === null)("the completion function offers commands and options for the words typed", () => {
    // _describe, compadd and _files print what they were given instead of drawing a menu.
    const script = `
compdef() { :; }
source ${JSON.stringify(join(dir, "valarmind.zsh"))}
_describe() { local arr=\${@[-1]}; print -rl -- \${(P)arr}; }
compadd() { print -rl -- \${(P)\${@[-1]}}; }
_files() { print -r -- FILES; }
comp() { words=("$@"); CURRENT=\${#words}; print -r -- "== $*"; _valarmind; }
comp valarmind ch
comp valarmind chat --out
comp valarmind chat --image ''
comp valarmind completion ''
`;
    const r = run(["zsh", "-f", "-s"], script);
    expect(r.stderr).toBe("");
    const blocks = Object.fromEntries(
      r.stdout
        .split("== ")
        .filter((block) => block !== "")
        .map((block) => {
          const [head, ...lines] = block.trimEnd().split("\n");
          return [head ?? "", lines];
        }),
    );
    expect(blocks["valarmind ch"]).toContain("chat:talk to the agent: the interactive REPL, or one headless turn with -p");
    expect(blocks["valarmind chat --out"]?.some((line) => line.startsWith("--output-format:"))).toBe(true);
    expect(blocks["valarmind chat --image "]).toEqual(["FILES"]);
    expect(blocks["valarmind completion "]).toEqual(["bash", "zsh", "fish"]);
  });
});

describe("fish", () => {
  test.skipIf(Bun.which("fish") === null)("complete -C offers commands and options for the words typed", () => {
    const file = join(dir, "valarmind.fish");
    const r = run(["fish", "--no-config", "-c", `source ${file}; complete -C 'valarmind ch'; echo ==; complete -C 'valarmind chat --out'; echo ==; complete -C 'valarmind -C /tmp state task '`]);
    expect(r.stderr).toBe("");
    const [commands, options, subcommands] = r.stdout.split("==\n").map((block) => block.trimEnd().split("\n").map((line) => line.split("\t")[0]));
    expect(commands).toEqual(["chat"]);
    expect(options).toEqual(["--output-format"]);
    expect(subcommands).toEqual(["add", "block", "done", "help", "update"]);
  });
});
