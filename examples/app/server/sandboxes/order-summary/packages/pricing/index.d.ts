export interface OrderLine {
  sku: string;
  quantity: number;
  totalCents: number;
}

export interface OrderSummary {
  lines: OrderLine[];
  subtotalCents: number;
  taxCents: number;
  totalCents: number;
  /** The total formatted in the order's currency, e.g. '€25.20'. */
  total: string;
}

/**
 * Totals `items` in integer cents. `taxRate` is a fraction (0.2 = 20 %).
 * @throws {RangeError} when a quantity is not a positive integer or a unit price is negative or fractional.
 */
export function summarize(
  items: Array<{ sku: string; quantity: number; unitCents: number }>,
  options: { taxRate: number; currency: string },
): OrderSummary;
