// The three budget windows (P0): their names, as the configuration spells them, and their lengths.
// Shared by the budget (src/monitor/budget-windows.ts) and the follow-ups' pace (src/group/gates.ts).

export const BUDGET_WINDOWS = ["5m", "3h", "24h"] as const;
export type BudgetWindowName = (typeof BUDGET_WINDOWS)[number];

export const BUDGET_WINDOW_MS: Readonly<Record<BudgetWindowName, number>> = {
  "5m": 5 * 60_000,
  "3h": 3 * 3600_000,
  "24h": 24 * 3600_000,
};
