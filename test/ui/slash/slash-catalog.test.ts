/**
 * One slash-command catalogue (src/agent/slash-catalog.ts): /help, completion and dispatch all read
 * it, so they cannot disagree about which commands exist.
 */
import { describe, expect, test } from "bun:test";
import { findSlashCommand, helpOutput, unknownCommandOutput } from "../../../src/agent/front-end-contract.ts";
import { SLASH_CATALOG } from "../../../src/agent/slash-catalog.ts";
import { filterCommands } from "../../../src/ui/input/completion.ts";
import { parseSlash } from "../../../src/ui/slash/parse-slash.ts";

const names = SLASH_CATALOG.map((command) => command.name);

describe("the slash-command catalogue", () => {
  test("names are unique, in alphabetical order, and every usage starts with its own slash and name", () => {
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(names);
    for (const command of SLASH_CATALOG) {
      expect(command.usage === `/${command.name}` || command.usage.startsWith(`/${command.name} `)).toBe(true);
      expect(command.description).not.toBe("");
    }
    // An alias never shadows another command's name, and a typed alias parses as a command.
    const aliases = SLASH_CATALOG.flatMap((command) => ("aliases" in command ? [...command.aliases] : []));
    for (const alias of aliases) {
      expect(names as readonly string[]).not.toContain(alias);
      expect(parseSlash(`/${alias}`)?.name).toBe(alias);
    }
  });

  test("the front end answers /help and /exit; the core runs the rest", () => {
    expect(SLASH_CATALOG.filter((command) => command.runs === "ui").map((command) => command.name)).toEqual(["exit", "help"]);
    expect(findSlashCommand(SLASH_CATALOG, "quit")?.name).toBe("exit");
    expect(findSlashCommand(SLASH_CATALOG, "q")?.name).toBe("exit");
    expect(findSlashCommand(SLASH_CATALOG, "frobnicate")).toBeUndefined();
  });

  test("/help lists every command with its usage and description, each once, then the keys", () => {
    const help = helpOutput(SLASH_CATALOG);
    expect(help.title).toBe("Commands");
    const commandLines = help.lines.slice(0, help.lines.indexOf(""));
    expect(commandLines).toHaveLength(SLASH_CATALOG.length);
    SLASH_CATALOG.forEach((command, i) => {
      const line = commandLines[i] ?? "";
      expect(line.startsWith(`${command.usage} `)).toBe(true);
      expect(line).toContain(command.description);
    });
    expect(help.lines.join("\n")).toContain("also /quit, /q");
    expect(help.lines.join("\n")).not.toContain("//");
    expect(help.lines.slice(commandLines.length + 1, commandLines.length + 2)).toEqual(["Keys"]);
  });

  test("completion offers every command, by the same usage and description, and narrows by prefix", () => {
    const all = filterCommands(SLASH_CATALOG, "");
    expect(all).toEqual(SLASH_CATALOG.map((command) => ({ value: command.name, label: command.usage, detail: command.description })));
    for (const name of names) expect(filterCommands(SLASH_CATALOG, name).map((item) => item.value)).toContain(name);
    expect(filterCommands(SLASH_CATALOG, "c").map((item) => item.value)).toEqual(["clear", "compact", "cost"]);
  });

  test("an unknown command is reported with a pointer to /help", () => {
    expect(unknownCommandOutput("frobnicate")).toEqual({
      title: "Unknown command /frobnicate",
      lines: ["Type /help for the list of commands."],
      isError: true,
    });
  });
});
