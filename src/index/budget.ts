/** RAM budgets (`--max-ram`) on index plans: the arithmetic the manifest records, and the refusal. */
import { ParamineError } from '../errors.js';
import { formatBytes } from './cost.js';
import type { IndexPlan } from './plan.js';

/** The plan with the budget's arithmetic among its reasons (it goes into the manifest's build plan). */
export function withBudget(plan: IndexPlan, n: number, budget: number, skipped: string[]): IndexPlan {
  const c = plan.cost;
  const parts = Object.entries(c.parts)
    .map(([k, v]) => `${v} B ${k}`)
    .join(' + ');
  const line =
    `RAM budget ${formatBytes(budget)}: ${n} x (${parts}) = ${formatBytes(n * c.perVector.ram)} + fixed ` +
    `${formatBytes(c.fixed.ram)} = ${formatBytes(c.total.ram)} <= ${formatBytes(budget)}` +
    (c.total.mapped > 0 ? `; memory-mapped, outside the budget: ${formatBytes(c.total.mapped)}` : '') +
    (skipped.length > 0 ? `; over budget: ${skipped.join(', ')}` : '');
  const reasons = [...plan.reasons, line];
  return { ...plan, reasons, reason: reasons.join('; '), budget: { maxRamBytes: budget, ram: c.total.ram } };
}

/** A given factory's plan under a RAM budget: refused (OVER_BUDGET) above it, else with its arithmetic. */
export function planWithinBudget(plan: IndexPlan, budget: number | undefined): IndexPlan {
  if (budget === undefined) return plan;
  const n = plan.cost.total.n;
  if (plan.cost.total.ram > budget) {
    throw new ParamineError(
      'OVER_BUDGET',
      `${plan.factory} for ${n} ${plan.dim}-d vectors needs ${formatBytes(plan.cost.total.ram)} of RAM, more ` +
        `than --max-ram ${formatBytes(budget)}: raise it, or leave --factory auto to pick one that fits`,
      { field: 'maxRam' },
    );
  }
  return withBudget(plan, n, budget, []);
}
