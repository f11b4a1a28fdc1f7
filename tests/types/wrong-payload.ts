// Must not compile: `notes` is a string in release-notes' ReleaseNotesPayload.
import { runSandbox } from '@vite-hub/sandbox';

export const notes = runSandbox('release-notes', { notes: 42 });
