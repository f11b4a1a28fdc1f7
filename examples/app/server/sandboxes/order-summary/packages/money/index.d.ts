/** Formats integer cents in `currency` (ISO 4217) with en-US conventions, e.g. 1250, 'EUR' → '€12.50'. */
export function formatCents(cents: number, currency: string): string;
