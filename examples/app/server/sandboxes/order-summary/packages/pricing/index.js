// Order arithmetic in integer cents.
import { formatCents } from '@order-summary/money';

/**
 * @param {Array<{ sku: string, quantity: number, unitCents: number }>} items
 * @param {{ taxRate: number, currency: string }} options taxRate as a fraction (0.2 = 20 %)
 */
export function summarize(items, { taxRate, currency }) {
  const lines = items.map(({ sku, quantity, unitCents }) => {
    if (!Number.isInteger(quantity) || quantity < 1)
      throw new RangeError(`${sku}: quantity must be a positive integer`);
    if (!Number.isInteger(unitCents) || unitCents < 0)
      throw new RangeError(`${sku}: unitCents must be a non-negative integer`);
    return { sku, quantity, totalCents: quantity * unitCents };
  });
  const subtotalCents = lines.reduce((sum, line) => sum + line.totalCents, 0);
  const taxCents = Math.round(subtotalCents * taxRate);
  const totalCents = subtotalCents + taxCents;
  return { lines, subtotalCents, taxCents, totalCents, total: formatCents(totalCents, currency) };
}
