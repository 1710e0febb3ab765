/**
 * What enters the REPL's state, made safe for the terminal (src/ui/terminal-safe-text.ts). The
 * reducer runs every agent event and every appended item through here, so nothing the views draw
 * from the transcript carries a control sequence. Prose and output lose their escape sequences;
 * what the user decides on or that names what runs (tool names and targets, approval details,
 * diffs, memory changes) keeps every character, controls shown.
 *
 * Ids are left alone: an approval is answered by its id. Text and reasoning deltas are not handled
 * here: the reducer streams them through `safeStreamChunk`, so a sequence split across deltas is
 * removed whole.
 */
import type { AgentEvent, SessionRemember } from "../../agent/events.ts";
import { terminalSafe, terminalSafeLiteral } from "../terminal-safe-text.ts";
import type { NewItem, ToolRowData } from "./transcript-items.ts";

function safeRemember(remember: SessionRemember): SessionRemember {
  if (remember.kind === "tool") return { kind: "tool", tool: terminalSafeLiteral(remember.tool) };
  return {
    kind: "command",
    exact: terminalSafeLiteral(remember.exact),
    ...(remember.prefix === undefined ? {} : { prefix: terminalSafeLiteral(remember.prefix) }),
  };
}

export function safeEvent(event: AgentEvent): AgentEvent {
  switch (event.type) {
    case "tool_call_start":
      return { ...event, name: terminalSafeLiteral(event.name), target: terminalSafeLiteral(event.target) };
    case "approval_request":
      return {
        ...event,
        name: terminalSafeLiteral(event.name),
        description: terminalSafeLiteral(event.description),
        ...(event.diff === undefined ? {} : { diff: terminalSafeLiteral(event.diff) }),
        ...(event.warning === undefined ? {} : { warning: terminalSafeLiteral(event.warning) }),
        ...(event.remember === undefined ? {} : { remember: safeRemember(event.remember) }),
      };
    case "tool_call_end":
      return {
        ...event,
        name: terminalSafeLiteral(event.name),
        summary: terminalSafe(event.summary),
        ...(event.diff === undefined ? {} : { diff: terminalSafeLiteral(event.diff) }),
      };
    case "retry":
      return { ...event, reason: terminalSafe(event.reason) };
    case "memory_updated":
      return { ...event, what: terminalSafeLiteral(event.what) };
    case "notice":
      return { ...event, message: terminalSafe(event.message) };
    case "error":
      return {
        ...event,
        message: terminalSafe(event.message),
        ...(event.hint === undefined ? {} : { hint: terminalSafe(event.hint) }),
      };
    case "turn_end":
      return { ...event, text: terminalSafe(event.text) };
    default:
      // text_delta and reasoning_delta are streamed by the reducer; the rest show no text.
      return event;
  }
}

function safeTool(tool: ToolRowData): ToolRowData {
  return {
    ...tool,
    name: terminalSafeLiteral(tool.name),
    target: terminalSafeLiteral(tool.target),
    ...(tool.summary === undefined ? {} : { summary: terminalSafe(tool.summary) }),
    ...(tool.diff === undefined ? {} : { diff: terminalSafeLiteral(tool.diff) }),
  };
}

export function safeItem(item: NewItem): NewItem {
  switch (item.kind) {
    case "banner":
      return { ...item, model: terminalSafe(item.model), sessionId: terminalSafe(item.sessionId) };
    case "user":
      return { ...item, text: terminalSafe(item.text) };
    case "markdown":
      return { ...item, source: terminalSafe(item.source) };
    case "tool":
      return { ...item, tool: safeTool(item.tool) };
    case "notice":
      return {
        ...item,
        text: terminalSafe(item.text),
        ...(item.hint === undefined ? {} : { hint: terminalSafe(item.hint) }),
      };
    case "command":
      return {
        ...item,
        command: terminalSafe(item.command),
        output: { ...item.output, title: terminalSafe(item.output.title), lines: item.output.lines.map(terminalSafe) },
      };
    case "turn_stop":
      return item;
  }
}
