// Compiles where TypeScript resolves `@vite-hub/sandbox` to the Node declarations (the `node`
// condition, and the `types` fallback when it knows no runtime): every runtime's functions, the
// Node entry's additions, and a SandboxDefinitions augmentation through the re-export.
import {
  readDefinitionDirectory,
  runSandbox,
  warmUp,
  type SandboxDefinitions,
  type WarmUpOptions,
} from '@vite-hub/sandbox';

declare module '@vite-hub/sandbox' {
  interface SandboxDefinitions {
    greet: { payload: { name: string }; result: string };
  }
}

export const run: Promise<Response> = runSandbox('greet', { name: 'Ada' });
// @ts-expect-error the augmented payload is checked
export const wrong = runSandbox('greet', { title: 'Ada' });
export const warmed: Promise<boolean> = warmUp({ onlyIfUsed: true } satisfies WarmUpOptions);
export const read: Promise<{ name: string; packagePath: string }> = readDefinitionDirectory('server/sandboxes/greet');
export const result: SandboxDefinitions['greet']['result'] = 'hello';
