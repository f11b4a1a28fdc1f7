// Must not compile: the entries of `required` and `needs-text` take a payload they do not default.
import { runSandbox } from '@vite-hub/sandbox';

export const length = runSandbox('required');
export const text = runSandbox('needs-text');
