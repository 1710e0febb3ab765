/**
 * What changed between two prompt projections of the working state: the fields and items of
 * `after` that are new or different, and the ids that are gone. Lets the prompt keep an older
 * projection in its cached part and send only the changes near the end (ADR 0063).
 */
import type { ProjectedBlocker, ProjectedDecision, ProjectedTask, StateProjection } from "./projection.ts";

export interface StateChanges {
  goal?: string;
  now?: string;
  decisions_recent?: ProjectedDecision[];
  tasks_open?: ProjectedTask[];
  blockers?: ProjectedBlocker[];
  conventions?: Record<string, string>;
  /** Ids (and `conventions.<name>`) in the earlier projection that are no longer there. */
  removed?: string[];
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function changedItems<T extends { id: string }>(before: readonly T[], after: readonly T[]): { changed: T[]; removed: string[] } {
  const earlier = new Map(before.map((item) => [item.id, item]));
  const later = new Set(after.map((item) => item.id));
  return {
    changed: after.filter((item) => !same(earlier.get(item.id), item)),
    removed: before.filter((item) => !later.has(item.id)).map((item) => item.id),
  };
}

/** Undefined when the projections are equal. */
export function diffProjections(before: StateProjection, after: StateProjection): StateChanges | undefined {
  const changes: StateChanges = {};
  const removed: string[] = [];
  if (before.goal !== after.goal) changes.goal = after.goal;
  if (before.now !== after.now) changes.now = after.now;
  const decisions = changedItems(before.decisions_recent, after.decisions_recent);
  if (decisions.changed.length > 0) changes.decisions_recent = decisions.changed;
  const tasks = changedItems(before.tasks_open, after.tasks_open);
  if (tasks.changed.length > 0) changes.tasks_open = tasks.changed;
  const blockers = changedItems(before.blockers, after.blockers);
  if (blockers.changed.length > 0) changes.blockers = blockers.changed;
  removed.push(...decisions.removed, ...tasks.removed, ...blockers.removed);
  const conventions = Object.fromEntries(Object.entries(after.conventions).filter(([key, value]) => !Object.hasOwn(before.conventions, key) || before.conventions[key] !== value));
  if (Object.keys(conventions).length > 0) changes.conventions = conventions;
  removed.push(...Object.keys(before.conventions).filter((key) => !Object.hasOwn(after.conventions, key)).map((key) => `conventions.${key}`));
  if (removed.length > 0) changes.removed = removed;
  return Object.keys(changes).length > 0 ? changes : undefined;
}
