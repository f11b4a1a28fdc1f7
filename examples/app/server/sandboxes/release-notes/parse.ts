// Extracts the list items of markdown-style release notes.
const ITEM = /^(?:[-*]|\d+\.)\s+(.*)$/;

/** Items of lines starting with `-`, `*` or `1.`; blank lines, headings and prose are skipped. */
export function parseItems(notes: string): string[] {
  const items: string[] = [];
  for (const raw of notes.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = ITEM.exec(line);
    const text = match?.[1]?.trim();
    if (text) items.push(text);
  }
  return items;
}
