/**
 * The ChatController the REPL holds: one AgentSession at a time (/clear and /resume switch it),
 * slash commands, status, completion and the per-repository prompt history. Composition only:
 * the logic lives in the agent, state and prompt modules.
 */
import { pricesFor } from "../../agent/session-cost.ts";
import { oneLine } from "../../one-line.ts";
import { appendFile, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { ChatController, CommandOutput, EarlierConversation, EarlierTurn, SessionListing, StatusSnapshot } from "../../agent/front-end-contract.ts";
import { catalogWithCustomCommands, findSlashCommand, helpOutput, SLASH_CATALOG, unknownCommandOutput, type SlashCommandInfo } from "../../agent/slash-catalog.ts";
import { customCommandCall, type CustomCommand } from "../../agent/custom-commands.ts";
import type { AgentEvent, ApprovalDecision } from "../../agent/events.ts";
import { AgentSession, type AgentSessionOptions } from "../../agent/session.ts";
import type { ResumeTarget } from "../../memory/session-memory.ts";
import { ensureValarmindDir, PRIVATE_FILE_MODE } from "../../config/valarmind-dir.ts";
import { describeError, ValarmindError } from "../../errors.ts";
import { redactSecrets } from "../../secrets/redact-secrets.ts";
import { describeSession, listSessions } from "../../session/transcript.ts";
import { walkFiles } from "../../tools/file-walk.ts";
import { contextWindowFor } from "../../model/context-windows.ts";
import { runSlashCommand } from "./slash-commands.ts";
import { gatherStatus, type StatusSource } from "../status/gather-status.ts";
import { resolveSettings, type ProjectSettingsReport } from "../../config/load-settings.ts";
import { decideTrust } from "../actions/workspace-trust.ts";
import { statusLines, statusRows } from "../status/status-report.ts";

const HISTORY_LIMIT = 500;
const COMPLETION_LIMIT = 20;

export interface ChatControllerOptions extends Omit<AgentSessionOptions, "resume"> {
  resume: ResumeTarget;
  /** Shown in the UI from the start (missing API key, invalid state). */
  warnings: string[];
  /** The custom commands (custom-command-files.ts): in `commands()`, expanded by `submit`. */
  customCommands?: readonly CustomCommand[];
  /** What /status reports besides the session: the run's settings as loaded (the project file's fate) and the folder's trust. */
  statusSource?: Omit<StatusSource, "session">;
}

export class SessionChatController implements ChatController {
  private session: AgentSession;
  private goal = "";
  private now = "";
  private warnings: string[];
  private files: string[] | undefined;
  private readonly catalog: readonly SlashCommandInfo[];

  private constructor(
    private readonly options: ChatControllerOptions,
    session: AgentSession,
  ) {
    this.session = session;
    this.catalog = catalogWithCustomCommands(options.customCommands ?? []);
    this.warnings = [...options.warnings, ...session.openNotices];
  }

  static async open(options: ChatControllerOptions): Promise<SessionChatController> {
    const session = await AgentSession.open({ ...options, resume: options.resume });
    const controller = new SessionChatController(options, session);
    await controller.refreshState();
    return controller;
  }

  private async refreshState(): Promise<void> {
    try {
      const read = await this.session.state.read();
      this.goal = read.state.goal;
      this.now = read.state.now;
      for (const notice of read.notices) if (!this.warnings.includes(notice)) this.warnings.push(notice);
    } catch (error) {
      const message = describeError(error);
      const hint = error instanceof ValarmindError && error.hint ? ` — ${error.hint}` : "";
      if (!this.warnings.includes(message + hint)) this.warnings.push(message + hint);
    }
  }

  status(): StatusSnapshot {
    const last = this.session.lastRequest;
    return {
      sessionId: this.session.sessionId,
      model: this.session.settings.model,
      approvals: this.session.tools.approvals.mode(),
      promptTokens: last?.totalTokens ?? 0,
      budgetTokens: last?.budgetTokens ?? this.session.settings.maxContextTokens,
      contextWindowTokens: contextWindowFor(this.session.settings.model, this.session.settings.contextWindow),
      cachedShare: last?.cachedShare,
      sessionTokens: this.session.sessionTokens,
      cost: this.session.cost.figures(pricesFor(this.session.settings)),
      goal: this.goal,
      now: this.now,
      warnings: this.warnings,
    };
  }

  async *submit(text: string, signal: AbortSignal): AsyncIterable<AgentEvent> {
    const call = customCommandCall(text, this.options.customCommands ?? []);
    for await (const event of this.session.submit(call?.message ?? text, signal, call ? { typed: text } : {})) {
      if (event.type === "turn_end") {
        await this.refreshState();
        this.files = undefined;
      }
      yield event;
    }
    // The settle step after the answer: the window may fold and promote to the working state.
    yield* this.session.settle(signal);
    await this.refreshState();
  }

  answer(id: string, decision: ApprovalDecision): boolean {
    return this.session.answer(id, decision);
  }

  commands(): readonly SlashCommandInfo[] {
    return this.catalog;
  }

  async runCommand(name: string, args: string, signal?: AbortSignal): Promise<CommandOutput> {
    const custom = this.options.customCommands?.find((candidate) => candidate.name === name);
    if (custom) {
      // The front end sends a custom command through submit(), which expands it; runCommand has nothing to run.
      const line = args === "" ? `/${name}` : `/${name} ${args}`;
      return { title: `/${name}`, lines: [`/${name} is a custom command (${custom.file}): its text is a message to the model; send "${line}" as a message`], isError: true };
    }
    const command = findSlashCommand(SLASH_CATALOG, name);
    if (!command) return unknownCommandOutput(name);
    try {
      switch (command.name) {
        case "help":
          return helpOutput(this.catalog);
        case "exit":
          return { title: "/exit", lines: ["/exit is answered by the front end (the REPL leaves on /exit or Ctrl+D); the core has nothing to leave"], isError: true };
        case "clear":
          return await this.switchSession({ kind: "new" }, "new session started; the working state is kept");
        case "resume":
          return await this.resume(args.trim());
        case "status":
          return this.statusOutput();
        case "sessions":
          return { title: "sessions", lines: (await this.listSessions()).map((s) => `${s.id}  ${s.startedAt.slice(0, 16)}  ${String(s.turns).padStart(3)} turns  ${oneLine(s.firstMessage, 60)}`) };
        default: {
          const output = await runSlashCommand(this.session, command.name, args, signal);
          await this.refreshState();
          return output;
        }
      }
    } catch (error) {
      // Cancelled by the user: the front end says so ("cancelled; nothing was changed by it").
      if (signal?.aborted) throw error;
      const message = describeError(error);
      const hint = error instanceof ValarmindError && error.hint ? [error.hint] : [];
      return { title: `/${name}`, lines: [message, ...hint], isError: true };
    }
  }

  private statusOutput(): CommandOutput {
    const source = this.options.statusSource ?? this.statusSourceFromDisk();
    const approvals = this.session.tools.approvals;
    const session = { id: this.session.sessionId, settings: this.session.settings, approvals: approvals.mode(), allowances: approvals.sessionAllowances() };
    return { title: "status", lines: statusLines(statusRows(gatherStatus({ ...source, session }))) };
  }

  /** Without the run's own: the folder's stored trust and its project file as read now. */
  private statusSourceFromDisk(): Omit<StatusSource, "session"> {
    const root = this.options.root;
    const trust = decideTrust(root, undefined);
    let project: ProjectSettingsReport | undefined;
    try {
      project = resolveSettings(root, {}, { trusted: trust.trusted }).project;
    } catch {
      project = undefined; // A damaged project file: the run's own loading said so already.
    }
    return { root, trust, loaded: { settings: this.options.settings, project } };
  }

  private async resume(id: string): Promise<CommandOutput> {
    if (id !== "") {
      // The session already open: nothing to switch to (opening it again would fork it, its own lock taken for another writer's).
      const named = listSessions(this.session.paths).filter((ref) => ref.id.startsWith(id));
      if (this.session.sessionId.startsWith(id) && (named.length === 0 || named.every((ref) => ref.id === this.session.sessionId))) {
        return { title: "resume", lines: [`already in session ${this.session.sessionId}`] };
      }
      return this.switchSession({ kind: "id", id }, `resumed session ${id}`);
    }
    const others = listSessions(this.session.paths).filter((ref) => ref.id !== this.session.sessionId);
    const latest = others.at(-1);
    if (!latest) return { title: "resume", lines: ["no other session in this workspace"], isError: true };
    return this.switchSession({ kind: "id", id: latest.id }, `resumed session ${latest.id}`);
  }

  private async switchSession(target: ResumeTarget, message: string): Promise<CommandOutput> {
    if (this.session.isBusy) return { title: "session", lines: ["a turn is running; abort it (Esc) first"], isError: true };
    const next = await AgentSession.open({ ...this.options, resume: target });
    await this.session.close();
    this.session = next;
    this.warnings = [...this.options.warnings, ...next.openNotices];
    await this.refreshState();
    const turns = next.memory.window.size;
    return { title: "session", lines: [message, `session ${next.sessionId}${turns > 0 ? ` · ${turns} turn(s) in the window` : ""}`] };
  }

  async completePath(prefix: string): Promise<string[]> {
    if (!this.files) {
      const files: string[] = [];
      for await (const entry of walkFiles(this.session.tools.root, this.session.tools.root)) {
        files.push(entry.rel);
        if (files.length >= 20_000) break;
      }
      this.files = files;
    }
    const needle = prefix.toLowerCase();
    const starts = this.files.filter((f) => f.toLowerCase().startsWith(needle));
    const contains = needle === "" ? [] : this.files.filter((f) => !f.toLowerCase().startsWith(needle) && f.toLowerCase().includes(needle));
    return [...starts, ...contains].slice(0, COMPLETION_LIMIT);
  }

  async listSessions(): Promise<SessionListing[]> {
    return listSessions(this.session.paths).flatMap((ref) => {
      try {
        return [describeSession(ref)];
      } catch {
        return [];
      }
    });
  }

  earlierConversation(): EarlierConversation {
    const tools = this.session.tools;
    const turns = this.session.earlier.turns.map(
      (turn): EarlierTurn => ({
        ...turn,
        steps: turn.steps.map((step) =>
          step.kind === "text"
            ? step
            : { kind: "tool", callId: step.callId, name: step.name, target: tools.target({ callId: step.callId, name: step.name, arguments: step.arguments }), summary: step.summary, isError: step.isError, denied: step.denied },
        ),
      }),
    );
    return { turns, total: this.session.earlier.total };
  }

  async loadHistory(): Promise<string[]> {
    let text: string;
    try {
      text = await readFile(this.session.paths.historyFile, "utf8");
    } catch {
      return [];
    }
    const entries: string[] = [];
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      try {
        const value: unknown = JSON.parse(line);
        if (typeof value === "object" && value !== null && "text" in value && typeof value.text === "string") entries.push(value.text);
      } catch {
        // A torn line from a crash mid-append: the other entries still load.
      }
    }
    return entries.slice(-HISTORY_LIMIT);
  }

  /** The history file is a copy at rest: redacted, 0600, in the private `.valarmind/`. */
  async appendHistory(text: string): Promise<void> {
    const paths = this.session.paths;
    ensureValarmindDir(paths, dirname(paths.historyFile));
    const line = JSON.stringify({ v: 1, ts: new Date().toISOString(), text: redactSecrets(text) });
    await appendFile(paths.historyFile, `${line}\n`, { mode: PRIVATE_FILE_MODE });
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}
