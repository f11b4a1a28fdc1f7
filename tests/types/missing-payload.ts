// Must not compile: the entry of `required` takes a payload it does not default.
import { runSandbox } from '@vite-hub/sandbox';

export const length = runSandbox('required');
