// POST /api/slugify {"title": "Hello"} → slugify-title, which installs `slugify` in the Box.
import { defineHandler } from 'nitro/h3';
import { runSandbox } from '@vite-hub/sandbox';

export default defineHandler(async (event) => runSandbox('slugify-title', await event.req.json()));
