// The links of a markdown page, read as GitHub renders them: outside fenced code blocks and
// inline code spans. tests/docs/links.test.mjs checks the repository's links with it, and
// scripts/build.mjs rewrites the README's relative links for the npm package (whose tarball holds
// no docs/, examples/ or scripts/).

/** A link's `](target` opening, the target as group 2 (no title, no closing parenthesis). */
const LINK_TARGET = /(\]\(\s*<?)([^)\s>]+)/g;
/** An inline code span: a run of backticks, text, the same run. */
const CODE_SPAN = /(`+)(?:(?!\1).)+?\1/g;

/** The page's lines outside fenced code blocks (`number`: 1-based); `emptyCode`: with inline code spans emptied of their text. */
export function proseLines(text, emptyCode = true) {
  const lines = [];
  let fence = null;
  for (const [index, line] of text.split('\n').entries()) {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      continue;
    }
    if (fence === null) lines.push({ number: index + 1, text: emptyCode ? line.replace(CODE_SPAN, '``') : line });
  }
  return lines;
}

/** `[text](target)` links of a page: `{ line, target }`, targets as written (no title). */
export function linksOf(text) {
  const links = [];
  for (const { number, text: line } of proseLines(text)) {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: number, target: match[1] });
    }
  }
  return links;
}

/** Whether a link target names a scheme (`https:`, `mailto:` …) rather than a path of the repository. */
export const isAbsoluteLink = (target) => /^[a-z][a-z0-9+.-]*:/i.test(target);

/**
 * `text` with each link target outside code replaced by `rewrite(target)` (code blocks and code
 * spans are left as they are).
 */
export function rewriteLinks(text, rewrite) {
  const prose = new Set(proseLines(text).map(({ number }) => number));
  const outsideCode = (line) => {
    let out = '';
    let last = 0;
    for (const span of line.matchAll(CODE_SPAN)) {
      out += line.slice(last, span.index).replace(LINK_TARGET, (_, open, target) => open + rewrite(target)) + span[0];
      last = span.index + span[0].length;
    }
    return out + line.slice(last).replace(LINK_TARGET, (_, open, target) => open + rewrite(target));
  };
  return text
    .split('\n')
    .map((line, index) => (prose.has(index + 1) ? outsideCode(line) : line))
    .join('\n');
}
