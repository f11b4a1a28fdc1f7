// Compiles: payloads and results typed from the generated .vite-hub/sandbox/sandbox.d.ts.
import { runSandbox, type SandboxDefinitions } from '@vite-hub/sandbox';

export const notes: Promise<Response> = runSandbox('release-notes', { notes: '- ship it' });
export const slug: Promise<Response> = runSandbox(
  'slugify-title',
  { title: 'Hello' },
  { context: { requestId: 'r1' } },
);

// The result type is the awaited return type of the entry's default export.
export const result: SandboxDefinitions['release-notes']['result'] = {
  summary: '1 change: ship it',
  items: ['ship it'],
};

// release-notes defaults its payload (`= {}`): it may be left out.
export const defaultNotes: Promise<Response> = runSandbox('release-notes');
export const length: Promise<Response> = runSandbox('required', { name: 'Ada' });
// So does the free-form word-count (`run(payload: Payload = {})` in defineSandbox).
export const words: Promise<Response> = runSandbox('word-count');
export const counted: Promise<Response> = runSandbox('word-count', { text: 'a b a', top: 1 });
export const needsText: Promise<Response> = runSandbox('needs-text', { text: 'abc' });

// A zero-argument default export takes any payload (`unknown`); its result is the awaited number.
export const anything: Promise<Response> = runSandbox('no-arguments', 1);
export const answer: SandboxDefinitions['no-arguments']['result'] = 42;
export const nothing: Promise<Response> = runSandbox('no-arguments');
