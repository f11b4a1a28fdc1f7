// Compiles without the generated registry (any name, any payload); with it, the name is unknown.
import { runSandbox } from '@vite-hub/sandbox';

export const any = runSandbox('not-generated', { whatever: true });
