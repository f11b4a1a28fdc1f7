// POST /api/workspace-report → the pnpm-workspace Definition `workspace-report`.
import { defineHandler } from 'nitro/h3';
import { runSandbox } from '@vite-hub/sandbox';

export default defineHandler(async (event) => runSandbox('workspace-report', await event.req.json()));
