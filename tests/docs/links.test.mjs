// The docs hold together (issue 23, item 4): every relative link of README.md, CONTRIBUTING.md and docs/**/*.md
// names a file or folder of the repository, every `#anchor` names a heading of the page it points
// at (GitHub's slugs), and no page outgrows its size: README.md ≤ 250 lines, a docs page ≤ 400.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAbsoluteLink, linksOf, proseLines, rewriteLinks } from '../../scripts/markdown-links.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** README.md, CONTRIBUTING.md and every .md below docs/, as absolute paths. */
export function docPages(root = repoRoot) {
  const pages = [join(root, 'README.md'), join(root, 'CONTRIBUTING.md')].filter((page) => existsSync(page));
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) pages.push(path);
    }
  };
  if (existsSync(join(root, 'docs'))) walk(join(root, 'docs'));
  return pages;
}

/** GitHub's anchor for a heading: its rendered text, lower-cased, punctuation dropped, spaces to `-`. */
export function slug(heading) {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/`([^`]*)`/g, '$1') // code spans: their text
    .replace(/(\*\*|__|\*)(.+?)\1/g, '$2') // emphasis markers
    .replace(/<[^>]+>/g, ''); // inline HTML
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page offers: its headings' slugs, numbered `-1`, `-2`… on repeats, as GitHub does. */
export function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  for (const { text: line } of proseLines(text, false)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The broken links of the pages under `root`: `"<page>:<line>: <target> (<why>)"`. */
export function brokenLinks(root = repoRoot) {
  const problems = [];
  for (const page of docPages(root)) {
    const text = readFileSync(page, 'utf8');
    for (const { line, target } of linksOf(text)) {
      if (isAbsoluteLink(target)) continue; // https:, mailto: …: not a file of the repository
      const where = `${relative(root, page)}:${line}: ${target}`;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      const file = pathPart === '' ? page : resolve(dirname(page), pathPart);
      if (!file.startsWith(root)) {
        problems.push(`${where} (leaves the repository)`);
        continue;
      }
      if (!existsSync(file)) {
        problems.push(`${where} (no such file)`);
        continue;
      }
      if (anchor === null) continue;
      if (!file.endsWith('.md') || statSync(file).isDirectory()) {
        problems.push(`${where} (an anchor into a file that is no markdown page)`);
        continue;
      }
      if (!anchorsOf(readFileSync(file, 'utf8')).has(anchor)) problems.push(`${where} (no heading with that anchor)`);
    }
  }
  return problems;
}

test('GitHub slugs: punctuation dropped, code and links by their text, repeats numbered', () => {
  assert.equal(slug('Reusing a Box: sandboxId'), 'reusing-a-box-sandboxid');
  assert.equal(
    slug('The provider seam (Transport → Provider/BoxSession → Run)'),
    'the-provider-seam-transport--providerboxsession--run',
  );
  assert.equal(
    slug('Sessions (`openSandboxSession`, `resolveSandboxRunner`)'),
    'sessions-opensandboxsession-resolvesandboxrunner',
  );
  assert.equal(slug('Agent tool: [sandbox_exec](x.md)'), 'agent-tool-sandbox_exec');
  assert.deepEqual(
    [...anchorsOf('# A\n\n## Limits\n\n```\n# not a heading\n```\n\n## Limits\n')],
    ['a', 'limits', 'limits-1'],
  );
});

test('links are read outside code blocks and code spans only', () => {
  const text = 'See [a](a.md) and `[b](b.md)`.\n\n```md\n[c](c.md)\n```\n[`d.rs`](src/d.rs#L3)\n';
  assert.deepEqual(linksOf(text), [
    { line: 1, target: 'a.md' },
    { line: 6, target: 'src/d.rs#L3' },
  ]);
});

test('rewriteLinks changes link targets outside code blocks and code spans only', () => {
  const text = 'See [a](a.md), `[b](b.md)` and [`c`](c/#x).\n\n```md\n[d](d.md)\n```\n';
  assert.equal(
    rewriteLinks(text, (target) => `https://x/${target}`),
    'See [a](https://x/a.md), `[b](b.md)` and [`c`](https://x/c/#x).\n\n```md\n[d](d.md)\n```\n',
  );
});

test('every relative link of README.md, CONTRIBUTING.md and docs/ resolves, and every #anchor names a heading', () => {
  const pages = docPages();
  assert.ok(pages.length > 10, `pages: ${pages.map((page) => relative(repoRoot, page))}`);
  assert.ok(
    pages.reduce((n, page) => n + linksOf(readFileSync(page, 'utf8')).length, 0) > 100,
    'the pages link to each other and to the code',
  );
  assert.deepEqual(brokenLinks(), []);
});

test('README.md has at most 250 lines, every docs page at most 400', () => {
  const tooLong = [];
  for (const page of docPages()) {
    const lines = readFileSync(page, 'utf8').split('\n').length - 1;
    const bound = page === join(repoRoot, 'README.md') ? 250 : 400;
    if (lines > bound) tooLong.push(`${relative(repoRoot, page)}: ${lines} lines (at most ${bound})`);
  }
  assert.deepEqual(tooLong, []);
});
