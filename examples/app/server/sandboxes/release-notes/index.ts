// Turns markdown-style release notes into a one-line summary and the list of changes.
import { parseItems } from './parse.ts';

export interface ReleaseNotesPayload {
  notes?: string;
}

export interface ReleaseNotesSummary {
  summary: string;
  items: string[];
}

export default function releaseNotes(payload: ReleaseNotesPayload = {}): ReleaseNotesSummary {
  const items = parseItems(typeof payload.notes === 'string' ? payload.notes : '');
  if (items.length === 0) return { summary: 'No notes', items };
  const noun = items.length === 1 ? 'change' : 'changes';
  return { summary: `${items.length} ${noun}: ${items.join('; ')}`, items };
}
