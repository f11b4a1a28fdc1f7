// validateToolInput and listDefinitionTools of mcp/definition-tools.mjs over given tool facts (the
// shapes the Vite plugin generates: draft-07 from TypeScript with $refs, 2020-12 from zod): the
// refused key as a path, every issue listed, the listing's defaults.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { listDefinitionTools, setDefinitionToolFacts, validateToolInput } from '../../dist/mcp/definition-tools.mjs';

after(() => setDefinitionToolFacts(null));

const ORDER = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: { customer: { type: 'string' }, items: { type: 'array', items: { $ref: '#/definitions/Item' } } },
  required: ['customer', 'items'],
  definitions: {
    Item: {
      type: 'object',
      properties: { name: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } },
      required: ['name', 'quantity'],
    },
  },
};

setDefinitionToolFacts(() => ({
  order: { description: 'Sums an order', inputSchema: ORDER, schema: 'typescript' },
  zod: { inputSchema: z.object({ 'odd key': z.string().min(2) }).toJSONSchema(), schema: 'standard' },
  untyped: { inputSchema: { type: 'object' }, schema: 'none' },
}));

async function refusal(name, input) {
  try {
    await validateToolInput(name, input);
  } catch (error) {
    assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
    assert.equal(error.status, 400);
    return error;
  }
  assert.fail(`${name} accepted ${JSON.stringify(input)}`);
}

test('a refused payload names its key as a path; a valid one passes unchanged', async () => {
  const nested = await refusal('order', { customer: 'a', items: [{ name: 'x', quantity: 1 }, { name: 'y' }] });
  assert.equal(nested.details.key, 'items[1].quantity');
  assert.match(
    nested.message,
    /^the payload of "order" does not match its inputSchema: payload\.items\[1\]\.quantity: is required$/,
  );
  const several = await refusal('order', { items: [{ name: 'x', quantity: 0 }] });
  assert.deepEqual(
    several.details.issues.map((issue) => issue.path),
    [['customer'], ['items', 0, 'quantity']],
  );
  const odd = await refusal('zod', { 'odd key': 'a' });
  assert.equal(odd.details.key, '["odd key"]');
  assert.match(odd.message, /payload\["odd key"\]: /);
  const notObject = await refusal('untyped', 'text');
  assert.equal(notObject.details.key, null);
  const valid = { customer: 'a', items: [{ name: 'x', quantity: 2 }] };
  assert.equal(await validateToolInput('order', valid), valid);
  await assert.rejects(validateToolInput('nope', {}), { code: 'SANDBOX_NOT_FOUND' });
});

test('listDefinitionTools: name order, the default description, only the names asked', async () => {
  const all = await listDefinitionTools();
  assert.deepEqual(
    all.map((tool) => tool.name),
    ['order', 'untyped', 'zod'],
  );
  assert.equal(all[0].description, 'Sums an order');
  assert.equal(all[1].description, 'Runs the Sandbox Definition "untyped".');
  assert.equal('outputSchema' in all[1], false);
  assert.deepEqual(
    (await listDefinitionTools({ definitions: ['zod'] })).map((tool) => tool.name),
    ['zod'],
  );
  await assert.rejects(listDefinitionTools({ definitions: 'zod' }), { code: 'SANDBOX_INVALID_ARGUMENT' });
});
