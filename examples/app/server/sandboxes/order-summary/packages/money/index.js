// Money formatting shared by the workspace packages.

/** Formats integer cents in `currency` with en-US conventions, e.g. 1250, 'EUR' → '€12.50'. */
export function formatCents(cents, currency) {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(cents / 100);
}
