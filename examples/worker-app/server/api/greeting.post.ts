// POST /api/greeting {"name": "Ada"} → the greeting Definition's result, run in a Cloudflare Sandbox.
import { defineHandler } from 'nitro/h3';
import { runSandbox } from '@vite-hub/sandbox';

export default defineHandler(async (event) => runSandbox('greeting', await event.req.json()));
