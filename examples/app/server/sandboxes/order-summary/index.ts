// Totals an order with the workspace package @order-summary/pricing (which itself uses
// @order-summary/money): pnpm links both inside the Box.
import { summarize } from '@order-summary/pricing';

interface LineItem {
  sku: string;
  quantity: number;
  unitCents: number;
}

interface Payload {
  items?: LineItem[];
  taxRate?: number;
  currency?: string;
}

export default function orderSummary(payload: Payload = {}) {
  return summarize(payload.items ?? [], { taxRate: payload.taxRate ?? 0, currency: payload.currency ?? 'EUR' });
}
