// Compiles where TypeScript resolves `@vite-hub/sandbox` for another runtime (the `workerd`
// condition here): every runtime's functions are there, the Node entry's additions are not.
import { runSandbox } from '@vite-hub/sandbox';
// @ts-expect-error warmUp is the Node entry's
import { warmUp } from '@vite-hub/sandbox';

export const run: Promise<Response> = runSandbox('anything', 1);
export { warmUp };
