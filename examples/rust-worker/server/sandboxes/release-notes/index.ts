// Turns markdown-style release notes into a one-line summary and the list of changes.
export default function releaseNotes(payload: { notes?: string } = {}) {
  const items = (payload.notes ?? '')
    .split('\n')
    .map((line) => /^\s*[-*]\s+(.*\S)/.exec(line)?.[1])
    .filter((item): item is string => item !== undefined);
  return { summary: `${items.length} change${items.length === 1 ? '' : 's'}: ${items.join('; ')}`, items };
}
