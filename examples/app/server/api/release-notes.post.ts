// POST /api/release-notes {"notes": "- ship it"} → the release-notes Definition's result.
import { defineHandler } from 'nitro/h3';
import { readRequestPayload, runSandbox } from '@vite-hub/sandbox';

export default defineHandler(async (event) =>
  runSandbox('release-notes', await readRequestPayload<'release-notes'>(event)),
);
