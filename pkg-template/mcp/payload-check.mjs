// The check of a `tools/call`'s arguments against the tool's `inputSchema` before a Box is asked
// for: a refused payload is a tool result with `isError: true`, code SANDBOX_INVALID_ARGUMENT and
// the failing keys (`payload.<path>: <message>`, as readValidatedPayload words them), never a
// JSON-RPC error (spec 2025-06-18, "Error Handling": tool errors go in the result so the model can
// correct its call). @cfworker/json-schema validates without generating code, so the check runs
// in workerd as in Node; dialect 2020-12 (what MCP's `inputSchema` is).
import { Validator } from '@cfworker/json-schema';
import { sandboxError } from '../runtime/sandbox-error.mjs';

/** At most this many issues are spelled out in the message (all are in `details.issues`). */
const MAX_LISTED_ISSUES = 10;
/** Keywords that only say "something below failed": the failure below is reported instead. */
const CONTAINER_KEYWORDS = new Set([
  'properties',
  'patternProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'prefixItems',
  'unevaluatedItems',
  'contains',
  '$ref',
  'allOf',
]);

/** One validator per schema object (a tool's schema is asked for on every tools/list). */
const validators = new WeakMap();

/**
 * Checks `payload` against `schema`; returns nothing, or throws a SandboxError
 * `SANDBOX_INVALID_ARGUMENT` with `issues: [{ path: string[], message }]`.
 * @param {string} name the tool (Definition) name, for the message
 * @param {object} schema the tool's inputSchema (JSON Schema 2020-12)
 * @param {unknown} payload the call's `arguments`
 */
export function checkPayload(name, schema, payload) {
  let validator = validators.get(schema);
  if (!validator) {
    validator = new Validator(schema, '2020-12', false);
    validators.set(schema, validator);
  }
  const { valid, errors } = validator.validate(payload);
  if (valid) return;
  const leaves = errors.filter((error) => !CONTAINER_KEYWORDS.has(error.keyword));
  const issues = (leaves.length ? leaves : errors).map(issueOf);
  const listed = issues
    .slice(0, MAX_LISTED_ISSUES)
    .map((issue) => `${['payload', ...issue.path].join('.')}: ${issue.message}`);
  if (issues.length > MAX_LISTED_ISSUES) listed.push(`and ${issues.length - MAX_LISTED_ISSUES} more`);
  const error = sandboxError(
    'SANDBOX_INVALID_ARGUMENT',
    `the arguments do not match the input schema of ${JSON.stringify(name)}: ${listed.join('; ')}`,
  );
  error.details = { issues };
  throw error;
}

/** `{ path, message }` of one @cfworker/json-schema error; `required` names the missing key in the path. */
function issueOf(error) {
  const path = error.instanceLocation
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((part) => decodeURIComponent(part.replaceAll('~1', '/').replaceAll('~0', '~')));
  if (error.keyword === 'required') {
    const missing = /"(.*)"/.exec(error.error)?.[1];
    if (missing !== undefined) return { path: [...path, missing], message: 'is required' };
  }
  if (error.keyword === 'false') return { path, message: 'is not allowed here' };
  return { path, message: error.error.replace(/^Instance /, '').replace(/\.$/, '') };
}
