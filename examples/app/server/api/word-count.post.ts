// POST /api/word-count {"text": "..."} → the free-form Definition src/word-count.sandbox.ts.
import { defineHandler } from 'nitro/h3';
import { runSandbox } from '@vite-hub/sandbox';

export default defineHandler(async (event) => runSandbox('word-count', await event.req.json()));
