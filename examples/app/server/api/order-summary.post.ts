// POST /api/order-summary → the pnpm-workspace Definition `order-summary` (its workspace packages
// are linked by `pnpm install --frozen-lockfile` inside the Box).
import { defineHandler } from 'nitro/h3';
import { runSandbox } from '@vite-hub/sandbox';

export default defineHandler(async (event) => runSandbox('order-summary', await event.req.json()));
