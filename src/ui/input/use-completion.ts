/**
 * Completion items for the word under the cursor: command names synchronously, workspace paths
 * through `completePath` (answers to an outdated query are dropped).
 */
import { useEffect, useMemo, useState } from "react";
import { describeError } from "../../errors.ts";
import type { SlashCommandInfo } from "../../agent/front-end-contract.ts";
import { completionContext, filterCommands, type CompletionContext, type CompletionItem } from "./completion.ts";
import type { EditorBuffer } from "./editor-buffer.ts";

export interface CompletionState {
  context: CompletionContext | undefined;
  items: CompletionItem[];
}

const MAX_PATHS = 50;

export function useCompletion(
  buffer: EditorBuffer,
  commands: readonly SlashCommandInfo[],
  completePath: (prefix: string) => Promise<string[]>,
  onError: (message: string) => void,
): CompletionState {
  const context = useMemo(() => completionContext(buffer), [buffer]);
  const [paths, setPaths] = useState<{ query: string; items: CompletionItem[] } | undefined>(undefined);
  const pathQuery = context?.kind === "path" ? context.query : undefined;

  useEffect(() => {
    if (pathQuery === undefined) return;
    let current = true;
    completePath(pathQuery).then(
      (found) => {
        if (current) {
          const items = found.slice(0, MAX_PATHS).map((path) => ({ value: path, label: path }));
          setPaths({ query: pathQuery, items });
        }
      },
      (error: unknown) => {
        if (current) onError(`path completion failed: ${describeError(error)}`);
      },
    );
    return () => {
      current = false;
    };
  }, [pathQuery, completePath, onError]);

  const items = useMemo(() => {
    if (context === undefined) return [];
    if (context.kind === "command") return filterCommands(commands, context.query);
    return paths?.query === context.query ? paths.items : [];
  }, [context, commands, paths]);
  return { context, items };
}
