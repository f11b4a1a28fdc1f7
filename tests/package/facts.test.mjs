// One source for shared facts: the error codes and their statuses, limit names and defaults, env
// names, never-shipped names and entry names are defined in Rust (crates/tooling/src/facts.rs) and generated
// into the package at build time. These tests fail when a copy drifts or a hand copy appears.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sharedFacts } from '../../dist/vite/tooling-wasm.mjs';
import * as generated from '../../dist/runtime/facts.mjs';
import { sandboxError, invalidArgument } from '../../dist/vite/sandbox-error.mjs';
import { ENTRIES as BUNDLED } from '../../scripts/bundle-node-entries.mjs';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const facts = sharedFacts();

test('runtime/facts.mjs is the core table', () => {
  assert.deepEqual(generated.ERROR_STATUS, Object.fromEntries(facts.errorCodes.map((f) => [f.code, f.status])));
  assert.deepEqual(
    generated.ERROR_OUTPUT_STATUS,
    Object.fromEntries(facts.errorCodes.map((f) => [f.code, f.outputStatus])),
  );
  assert.deepEqual([...generated.SANDBOX_ENV_NAMES], facts.envNames);
  assert.deepEqual(generated.TRANSFER_LIMITS, facts.transferLimits);
  assert.deepEqual(generated.DEFINITION_LIMITS, facts.definitionLimits);
  assert.deepEqual([...generated.ENTRY_NAMES], facts.entryNames);
  assert.deepEqual(generated.EXCLUDED_NAMES, facts.excluded);
  assert.equal(generated.ERROR_STATUS.SANDBOX_TIMEOUT, 504);
  assert.ok(facts.limitNames.includes('maxDefinitionBytes'), 'the limit the core produces for a too-big Definition');
});

test('index.d.ts declares exactly the core codes, limit names and provider names', () => {
  const text = readFileSync(join(dist, 'runtime', 'index.d.ts'), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  assert.doesNotMatch(text, /@generated:/, 'no placeholder left');
  const union = (name) => {
    const match = new RegExp(`export type ${name} =([^;]*);`).exec(text);
    assert.ok(match, name);
    return [...match[1].matchAll(/'([^']+)'/g)].map((m) => m[1]);
  };
  assert.deepEqual(
    union('SandboxErrorCode'),
    facts.errorCodes.map((f) => f.code),
  );
  assert.deepEqual(union('SandboxLimitName'), facts.limitNames);
  assert.deepEqual(union('SandboxProviderName'), facts.providerNames);
  assert.deepEqual(facts.providerNames, ['vercel', 'cloudflare', 'local']);
});

test('no declaration types the provider names by hand: each names SandboxProviderName', () => {
  for (const file of [
    'runtime/index.d.ts',
    'runtime/index.node.d.ts',
    'vite/vite.d.ts',
    'box-host/index.d.ts',
    'agent/index.d.ts',
  ]) {
    const text = readFileSync(join(dist, file), 'utf8').replace(/export type SandboxProviderName =[^;]*;/, '');
    assert.doesNotMatch(text, /'(vercel|cloudflare|local)'\s*\|\s*'(vercel|cloudflare|local)'/, file);
  }
});

test('no file of the package holds a hand copy of a shared list', () => {
  const lists = {
    'env names': facts.envNames,
    'entry names': facts.entryNames,
    'error codes': facts.errorCodes.map((f) => f.code),
    'limit names': facts.limitNames,
  };
  const generatedFiles = new Set(['runtime/facts.mjs', 'runtime/index.d.ts']);
  // A bundled entry inlines the generated facts.mjs: its readable source is what is checked.
  const bundled = new Set(BUNDLED.map(({ file }) => file));
  const pkgTemplate = fileURLToPath(new URL('../../pkg-template/', import.meta.url));
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (name !== 'wasm') walk(path);
      } else if (/\.(mjs|d\.ts)$/.test(name)) {
        files.push(path);
      }
    }
  };
  walk(dist);
  assert.ok(files.length > 20, 'the package files were found');
  for (const file of files) {
    const name = relative(dist, file);
    if (generatedFiles.has(name)) continue;
    const text = readFileSync(bundled.has(name) ? join(pkgTemplate, name) : file, 'utf8');
    for (const [label, list] of Object.entries(lists)) {
      const copied = list.every((item) => text.includes(`'${item}'`) || text.includes(`"${item}"`));
      assert.ok(!copied, `${name} holds a copy of the ${label}; import them from runtime/facts.mjs`);
    }
  }
});

test('errors built by the JS glue carry the status of their code', () => {
  for (const { code, status } of facts.errorCodes) {
    const error = sandboxError(code, 'x');
    assert.equal(error.name, 'SandboxError');
    assert.equal(error.status, status, code);
  }
  assert.equal(invalidArgument('bad').status, 400);
  assert.throws(() => sandboxError('SANDBOX_NOPE', 'x'), TypeError);
});
