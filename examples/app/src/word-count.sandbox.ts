// A free-form Definition: one file, no package of its own. `runSandbox('word-count', { text })`
// counts words and lists the most frequent ones; the helper below is bundled with it.
import { defineSandbox } from '@vite-hub/sandbox';
import { topWords } from './text/top-words';

interface Payload {
  text?: string;
  top?: number;
}

export default defineSandbox({
  timeout: 10_000,
  run(payload: Payload = {}) {
    const words = (payload.text ?? '').toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
    return { words: words.length, top: topWords(words, payload.top ?? 3) };
  },
});
