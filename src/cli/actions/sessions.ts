/** `valarmind sessions list|show` read transcripts only; `sessions prune --yes` removes old sessions. */
import { relative } from "node:path";
import { oneLine } from "../../one-line.ts";
import { findWorkspaceRoot, workspacePaths } from "../../config/paths.ts";
import { describeError } from "../../errors.ts";
import { describeSession, findSession, listSessions, readSession, strayTranscripts, UnreadableTranscriptError } from "../../session/transcript.ts";
import type { TranscriptRecord } from "../../session/transcript-schema.ts";
import { damagedSideFile } from "../../session/damaged-lines.ts";
import { describeRenumbering } from "../../session/turn-order.ts";
import { formatBytes, planPrune, prune, sessionsInUse, type PruneCandidate } from "../../session/session-prune.ts";
import { sessionLockHolder } from "../../session/session-lock.ts";
import { terminalSafe } from "../../ui/terminal-safe-text.ts";
import { jsonForTerminal } from "../../ui/print-json.ts";

/** Transcripts hold model answers, tool outputs and file names: what is printed for people cannot act on the terminal (--json escapes). */
function print(text: string): void {
  process.stdout.write(terminalSafe(text));
}

/** `sessions list` mentions sessions unused for longer than this. */
const PRUNE_HINT_DAYS = 30;

/** How much of a session's first message `sessions list` shows. */
const FIRST_MESSAGE_CHARS = 70;

export async function listSessionsCommand(opts: { json: boolean }): Promise<number> {
  const paths = workspacePaths(findWorkspaceRoot());
  for (const stray of strayTranscripts(paths)) {
    process.stderr.write(terminalSafe(`valarmind: skipped ${stray.file}: ${stray.what}, not a transcript valarmind wrote; remove it (a cloned repository may have shipped it)\n`));
  }
  const listings = listSessions(paths).map((ref) => {
    try {
      return describeSession(ref);
    } catch (error) {
      // The reason, not the path first: the column is cut at 70 characters.
      const why = error instanceof UnreadableTranscriptError ? error.why : describeError(error);
      return { id: ref.id, file: ref.file, startedAt: ref.stamp.replace(/^(\d{4}-\d{2}-\d{2})[T ](\d{2})-(\d{2})-(\d{2})/, "$1 $2:$3:$4"), turns: 0, firstMessage: `(unreadable: ${why})` };
    }
  });
  for (const s of listings) {
    if ("headerId" in s && s.headerId !== undefined) process.stderr.write(terminalSafe(`valarmind: ${s.file}: its header names session ${s.headerId}; listed under the file's id ${s.id}, which is what 'sessions show' and '--resume' open\n`));
  }
  if (opts.json) {
    process.stdout.write(`${jsonForTerminal(listings, 2)}\n`);
    return 0;
  }
  if (listings.length === 0) {
    print(`no sessions in ${relative(process.cwd(), paths.sessionsDir) || paths.sessionsDir} yet; start one with 'valarmind chat'\n`);
    return 0;
  }
  print(`${"id".padEnd(10)} ${"started".padEnd(20)} ${"turns".padStart(5)}  first message\n`);
  for (const s of listings) {
    print(`${s.id.padEnd(10)} ${s.startedAt.slice(0, 19).replace("T", " ").padEnd(20)} ${String(s.turns).padStart(5)}  ${oneLine(s.firstMessage, FIRST_MESSAGE_CHARS)}\n`);
  }
  // Sizes only: the listing above already read every transcript.
  const old = planPrune(paths, { olderThanDays: PRUNE_HINT_DAYS, describe: false }).remove;
  if (old.length > 0) {
    print(`\n${old.length} session(s) unused for over ${PRUNE_HINT_DAYS} days take ${formatBytes(old.reduce((n, c) => n + c.bytes, 0))}; 'valarmind sessions prune' lists them, '--yes' removes them\n`);
  }
  return 0;
}

/** A message's later lines, indented under its first: a line of it can never read as a record of its own ("[turn 2] user: …"). */
function indented(text: string): string {
  return text.split("\n").join("\n  ");
}

function renderRecord(record: TranscriptRecord, raw: boolean): string | undefined {
  switch (record.kind) {
    case "user":
      return `\n[turn ${record.turn}] user: ${indented(record.text)}`;
    case "assistant":
      return record.text.trim() === "" ? undefined : `assistant: ${indented(record.text)}`;
    case "tool_call": {
      const mark = record.is_error ? " (error)" : "";
      const body = raw ? (record.raw ?? record.output) : record.summary;
      return `tool ${record.name}${mark} ${oneLine(record.arguments, 120)}\n  → ${body.split("\n").join("\n    ")}`;
    }
    case "reasoning":
      return `reasoning: ${oneLine(record.text, 200)}`;
    case "turn_end": {
      const u = record.usage;
      const usage = u ? ` · input ${u.input} (cached ${u.cached}) · output ${u.output}` : "";
      return `— turn ${record.turn} ended: ${record.stop_reason}, ${record.steps} model call(s)${usage}`;
    }
    case "summary":
      return `— turns ${record.from_turn}–${record.through_turn} folded into the summary (${record.reason}, ${record.summarizer})`;
    case "note":
      return `— note (${record.what}): ${oneLine(record.text, 200)}`;
    case "undo":
    case "redo":
      return `— ${record.kind} of turn ${record.of_turn}${record.forced ? " (--force)" : ""}: ${record.files.join(", ")}`;
    case "state_snapshot":
    case "turn_context":
    case "working_set":
    case "session":
      return undefined;
  }
}

export async function showSessionCommand(id: string, opts: { json: boolean; raw: boolean }): Promise<number> {
  const paths = workspacePaths(findWorkspaceRoot());
  const ref = findSession(paths, id);
  const read = readSession(ref.file);
  // A line still being written is not a crash: say who is writing it.
  const writer = read.tornTail === undefined ? undefined : sessionLockHolder(paths, ref.id);
  const tornNote = writer !== undefined ? `— the last line is still being written (the session is in use by ${writer})` : "— the last line is incomplete (a crash mid-write); it is kept on the next --resume";
  const damageNotes = read.damaged.map((d) => `— line ${d.line} is damaged and skipped (${d.reason}); kept verbatim in ${damagedSideFile(ref.file)} on the next --resume`);
  if (opts.json) {
    for (const record of [read.header, ...read.records]) process.stdout.write(`${jsonForTerminal(record)}\n`);
    // What the JSON leaves out is said on stderr, as the text view says it.
    for (const note of [...(read.tornTail !== undefined ? [tornNote] : []), ...damageNotes]) process.stderr.write(terminalSafe(`valarmind: ${ref.file}: ${note.slice(2)}\n`));
    return 0;
  }
  const h = read.header;
  print(`session ${h.id} · started ${h.started_at} · model ${h.model} · valarmind ${h.valarmind}\n${ref.file}\n`);
  for (const record of read.records) {
    const text = renderRecord(record, opts.raw);
    if (text !== undefined) print(`${text}\n`);
  }
  if (read.tornTail !== undefined) print(`${tornNote}\n`);
  for (const note of damageNotes) print(`${note}\n`);
  if (read.renumbered.length > 0) print(`— turns written by two processes at once, renumbered: ${describeRenumbering(read.renumbered)}\n`);
  return 0;
}

/** `valarmind sessions prune [--older-than DAYS] [--yes]`: lists old sessions; removes them with --yes. */
export async function pruneSessionsCommand(opts: { olderThanDays: number; yes: boolean }): Promise<number> {
  const paths = workspacePaths(findWorkspaceRoot());
  const plan = planPrune(paths, { olderThanDays: opts.olderThanDays });
  const days = `${opts.olderThanDays} day${opts.olderThanDays === 1 ? "" : "s"}`;
  const line = (c: PruneCandidate) =>
    `  ${c.id.padEnd(10)} last used ${c.lastUsed.toISOString().slice(0, 10)}  ${String(c.turns).padStart(4)} turns  ${formatBytes(c.bytes).padStart(8)}  ${c.transcript ? oneLine(c.firstMessage, 50) : "(files left without a transcript)"}`;
  const total = (list: PruneCandidate[]) => formatBytes(list.reduce((n, c) => n + c.bytes, 0));
  const kept = [`${plan.recent} used within ${days}`, ...(plan.forkParents.length > 0 ? [`${plan.forkParents.length} that newer sessions were forked from (${plan.forkParents.join(", ")})`] : [])];
  if (plan.remove.length === 0) {
    print(`no session of this workspace is unused for over ${days}; kept ${kept.join(", ")}\n`);
    return 0;
  }
  if (!opts.yes) {
    // A session in use (a REPL left open for days, a running chat -p) is kept by --yes: say so now.
    const busy = sessionsInUse(paths, plan.remove.map((c) => c.id));
    const removable = plan.remove.filter((c) => !busy.has(c.id));
    if (removable.length > 0) {
      print(`${removable.length} session(s) unused for over ${days}, ${total(removable)} (transcripts, manifests, shell outputs, undo checkpoints):\n`);
      for (const c of removable) print(`${line(c)}\n`);
    }
    for (const [id, holder] of busy) print(`  ${id.padEnd(10)} in use by another valarmind (${holder}): kept\n`);
    const keptNow = busy.size > 0 ? [...kept, `${busy.size} in use now`] : kept;
    print(`kept ${keptNow.join(", ")}. Nothing was removed${removable.length > 0 ? `: run 'valarmind sessions prune --older-than ${opts.olderThanDays} --yes' to remove them` : ""}.\n`);
    return 0;
  }
  const result = await prune(paths, plan);
  for (const c of result.removed) print(`removed${line(c).slice(1)}\n`);
  for (const s of result.skipped) process.stderr.write(terminalSafe(`valarmind: kept session ${s.id}: ${s.why}\n`));
  print(`removed ${result.removed.length} session(s), ${total(result.removed)}; kept ${kept.join(", ")}\n`);
  return result.skipped.length > 0 ? 1 : 0;
}
