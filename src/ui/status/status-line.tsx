import { Box, Text } from "ink";
import { memo } from "react";
import type { StatusSnapshot } from "../../agent/front-end-contract.ts";
import { useTheme } from "../theme-context.tsx";
import { budgetBar, statusFields } from "./format-status.ts";

const BAR_CELLS = 8;
/** Above this share of the budget the bar turns red: the next turn will cut something. */
const HIGH_SHARE = 0.85;

interface StatusLineProps {
  status: StatusSnapshot;
}

/**
 * Two lines: the request figures (model, prompt/budget with a bar, the share of the model's
 * context window when the core knows the window, the session's cached share,
 * session tokens, effective input and its price when prices are set, approvals mode), then the
 * goal and `now` from the working state.
 */
export const StatusLine = memo(function StatusLine({ status }: StatusLineProps) {
  const theme = useTheme();
  const fields = statusFields(status);
  const bar = budgetBar(status.promptTokens, status.budgetTokens, BAR_CELLS);
  const filled = bar.share >= HIGH_SHARE ? theme.barHigh(bar.filled) : theme.barFilled(bar.filled);
  const sep = theme.dim(" · ");
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        {theme.bold(fields.model)}
        {sep}
        {theme.dim("prompt ")}
        {fields.prompt} {filled}
        {theme.dim(bar.empty)}
        {fields.window !== undefined ? `${sep}${theme.dim("window ")}${fields.window}` : ""}
        {sep}
        {theme.dim("cached ")}
        {fields.cached}
        {sep}
        {theme.dim("session ")}
        {fields.session}
        {sep}
        {theme.dim("eff ")}
        {fields.effective}
        {sep}
        {theme.dim(fields.approvals)}
      </Text>
      <Text wrap="truncate-end">
        {theme.dim("goal ")}
        {fields.goal}
        {fields.now !== "" ? `${theme.dim(" · now ")}${fields.now}` : ""}
      </Text>
    </Box>
  );
});
