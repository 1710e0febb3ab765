/** `valarmind sessions list|show`: reads transcripts only; never writes. */
import { relative } from "node:path";
import { findWorkspaceRoot, workspacePaths } from "../../config/paths.ts";
import { describeError } from "../../errors.ts";
import { describeSession, findSession, listSessions, readSession } from "../../session/transcript.ts";
import type { TranscriptRecord } from "../../session/transcript-schema.ts";
import { damagedSideFile } from "../../session/damaged-lines.ts";
import { describeRenumbering } from "../../session/turn-order.ts";

function oneLine(text: string, max = 70): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export async function listSessionsCommand(opts: { json: boolean }): Promise<number> {
  const paths = workspacePaths(findWorkspaceRoot());
  const listings = listSessions(paths).map((ref) => {
    try {
      return describeSession(ref);
    } catch (error) {
      return { id: ref.id, file: ref.file, startedAt: ref.stamp, turns: 0, firstMessage: `(unreadable: ${describeError(error)})` };
    }
  });
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(listings, null, 2)}\n`);
    return 0;
  }
  if (listings.length === 0) {
    process.stdout.write(`no sessions in ${relative(process.cwd(), paths.sessionsDir) || paths.sessionsDir} yet; start one with 'valarmind chat'\n`);
    return 0;
  }
  process.stdout.write(`${"id".padEnd(10)} ${"started".padEnd(20)} ${"turns".padStart(5)}  first message\n`);
  for (const s of listings) {
    process.stdout.write(`${s.id.padEnd(10)} ${s.startedAt.slice(0, 19).replace("T", " ").padEnd(20)} ${String(s.turns).padStart(5)}  ${oneLine(s.firstMessage)}\n`);
  }
  return 0;
}

function renderRecord(record: TranscriptRecord, raw: boolean): string | undefined {
  switch (record.kind) {
    case "user":
      return `\n[turn ${record.turn}] user: ${record.text}`;
    case "assistant":
      return record.text.trim() === "" ? undefined : `assistant: ${record.text}`;
    case "tool_call": {
      const mark = record.is_error ? " (error)" : "";
      const body = raw ? (record.raw ?? record.output) : record.summary;
      return `tool ${record.name}${mark} ${oneLine(record.arguments, 120)}\n  → ${body.split("\n").join("\n    ")}`;
    }
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
    case "working_set":
    case "session":
      return undefined;
  }
}

export async function showSessionCommand(id: string, opts: { json: boolean; raw: boolean }): Promise<number> {
  const paths = workspacePaths(findWorkspaceRoot());
  const ref = findSession(paths, id);
  const read = readSession(ref.file);
  if (opts.json) {
    for (const record of [read.header, ...read.records]) process.stdout.write(`${JSON.stringify(record)}\n`);
    return 0;
  }
  const h = read.header;
  process.stdout.write(`session ${h.id} · started ${h.started_at} · model ${h.model} · valarmind ${h.valarmind}\n${ref.file}\n`);
  for (const record of read.records) {
    const text = renderRecord(record, opts.raw);
    if (text !== undefined) process.stdout.write(`${text}\n`);
  }
  if (read.tornTail !== undefined) process.stdout.write(`— the last line is incomplete (a crash mid-write); it is kept on the next --resume\n`);
  for (const d of read.damaged) process.stdout.write(`— line ${d.line} is damaged and skipped (${d.reason}); kept verbatim in ${damagedSideFile(ref.file)} on the next --resume\n`);
  if (read.renumbered.length > 0) process.stdout.write(`— turns written by two processes at once, renumbered: ${describeRenumbering(read.renumbered)}\n`);
  return 0;
}
