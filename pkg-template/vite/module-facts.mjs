// Facts about one ES module, for the module-graph rules in Rust (crates/core/src/definition/module_graph.rs):
// its import edges and its CommonJS references, each with the position in the ORIGINAL source.
// Parsing is the app's Vite's (`parseAst`, app-vite.mjs), scoping is eslint-scope's, source maps
// are @jridgewell/trace-mapping's; no rule about what is allowed lives here. Contract:
// docs/internals/build-steps.md, "TypeScript".
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';
import { analyze } from 'eslint-scope';
import { parseModule } from './app-vite.mjs';

const COMMONJS_NAMES = new Set(['require', 'module', 'exports']);

/** Child nodes of an ESTree node (every property holding a node or an array of nodes). */
function* children(node) {
  for (const key of Object.keys(node)) {
    if (key === 'loc' || key === 'range') continue;
    const value = node[key];
    if (Array.isArray(value)) {
      for (const item of value) if (item && typeof item.type === 'string') yield item;
    } else if (value && typeof value.type === 'string') {
      yield value;
    }
  }
}

/** Every node with its parent, in source order (iterative, so deep ASTs do not overflow the stack). */
function parents(ast) {
  const parentOf = new Map();
  const stack = [ast];
  while (stack.length > 0) {
    const node = stack.pop();
    for (const child of children(node)) {
      parentOf.set(child, node);
      stack.push(child);
    }
  }
  return parentOf;
}

/** The string a module specifier node denotes, or null when it is not a constant string. */
function literalSpecifier(node) {
  if (node.type === 'Literal' && typeof node.value === 'string') return node.value;
  if (node.type === 'TemplateLiteral' && node.expressions.length === 0) return node.quasis[0].value.cooked ?? null;
  return null;
}

/** Maps a position of `code` (`loc`, 1-based line, 0-based column) to the original source. */
function makeLocator(map) {
  if (!map) return (loc) => ({ line: loc.line, column: loc.column + 1 });
  const traced = new TraceMap(map);
  return (loc) => {
    const original = originalPositionFor(traced, { line: loc.line, column: loc.column });
    if (original.line == null) return { line: null, column: null };
    return { line: original.line, column: original.column + 1 };
  };
}

/**
 * Whether a `const x = require(…)` declaration was written as TypeScript `import x = require(…)`
 * (the TypeScript transform compiles one to the other): the original text at the declaration starts with `import`.
 */
function isImportEqualsDeclaration(declaration, map, locate) {
  const sourceText = map && (typeof map === 'string' ? JSON.parse(map) : map).sourcesContent?.[0];
  if (!sourceText || declaration?.type !== 'VariableDeclaration') return false;
  const { line, column } = locate(declaration.loc.start);
  if (line == null) return false;
  const text = sourceText.split(/\r\n|\r|\n/)[line - 1] ?? '';
  return /^(export\s+)?import\s/.test(text.slice(column - 1));
}

/** How an unresolved `require` / `module` / `exports` reference is used (see moduleFacts). */
function commonJsUsage(identifier, parentOf, isImportEquals) {
  const parent = parentOf.get(identifier);
  const grandparent = parent && parentOf.get(parent);
  const isAssigned = (node) => {
    const holder = parentOf.get(node);
    return (
      (holder?.type === 'AssignmentExpression' && holder.left === node) ||
      (holder?.type === 'UpdateExpression' && holder.argument === node)
    );
  };
  const memberName = (member) =>
    member.computed ? (typeof member.property.value === 'string' ? member.property.value : null) : member.property.name;
  const isObjectOf = parent?.type === 'MemberExpression' && parent.object === identifier;
  switch (identifier.name) {
    case 'require':
      if (parent?.type === 'CallExpression' && parent.callee === identifier) {
        return { usage: isImportEquals(grandparent) ? 'import-require' : 'require-call' };
      }
      if (isObjectOf) return { usage: 'require-member', property: memberName(parent) };
      return { usage: 'require-reference' };
    case 'module':
      if (isObjectOf && memberName(parent) === 'exports') {
        const assigned =
          isAssigned(parent) ||
          (grandparent?.type === 'MemberExpression' && grandparent.object === parent && isAssigned(grandparent));
        return { usage: assigned ? 'module-exports-assignment' : 'module-exports-reference' };
      }
      return { usage: 'module-reference' };
    default: {
      const assigned = isAssigned(identifier) || (isObjectOf && isAssigned(parent));
      return { usage: assigned ? 'exports-assignment' : 'exports-reference' };
    }
  }
}

/**
 * The import edges and CommonJS references of one ES module.
 *
 * `code` is what runs (for TypeScript: the compiled output); `map` is its source map (the transform's
 * external map, JSON text or object) or absent when `code` is the source itself. Positions:
 * `start`/`end` are UTF-16 offsets of the specifier literal in `code` (quotes included; for a
 * non-literal `import(expr)` the argument expression); `line` (1-based) and `column` (1-based, UTF-16)
 * are in the original source, both `null` when the source map has no mapping there.
 *
 * Usages: `require-call` (`require(…)`), `import-require` (TypeScript `import x = require(…)`,
 * recognised from the original text at the mapped declaration), `require-member` (`require.x`,
 * with `property`), `require-reference`, `module-exports-assignment` (`module.exports = …` or
 * `module.exports.x = …`), `module-exports-reference`, `module-reference`, `exports-assignment`
 * (`exports = …`, `exports.x = …`), `exports-reference`. Only references that no declaration in
 * the module binds (eslint-scope's `globalScope.through`) count: a local `function require()`,
 * `obj.require` or a label are not references.
 *
 * @param {string} code
 * @param {{ map?: string | object }} [options]
 * @returns {Promise<{ imports: Array<{ specifier: string | null, start: number, end: number, line: number | null, column: number | null, dynamic: boolean }>,
 *             commonjs: Array<{ name: 'require' | 'module' | 'exports', usage: string, property?: string | null, line: number | null, column: number | null }> }>}
 * @throws {SyntaxError} with `loc` (positions of `code`) when `code` is not a valid module.
 */
export async function moduleFacts(code, { map } = {}) {
  const ast = await parseModule(code, "Checking a Definition's module graph");
  const locate = makeLocator(map);
  const parentOf = parents(ast);

  const imports = [];
  const addImport = (node, dynamic) => {
    const specifier = literalSpecifier(node);
    imports.push({ specifier, start: node.start, end: node.end, ...locate(node.loc.start), dynamic });
  };
  for (const node of parentOf.keys()) {
    if (
      node.type === 'ImportDeclaration' ||
      node.type === 'ExportAllDeclaration' ||
      (node.type === 'ExportNamedDeclaration' && node.source)
    ) {
      addImport(node.source, false);
    } else if (node.type === 'ImportExpression') {
      addImport(node.source, true);
    }
  }
  imports.sort((a, b) => a.start - b.start);

  const scopes = analyze(ast, { ecmaVersion: 2022, sourceType: 'module' });
  const isImportEquals = (declarator) =>
    declarator?.type === 'VariableDeclarator' && isImportEqualsDeclaration(parentOf.get(declarator), map, locate);
  /** @type {Array<{ name: 'require' | 'module' | 'exports', usage: string, property?: string | null, line: number | null, column: number | null, offset?: number }>} */
  const commonjs = [];
  for (const reference of scopes.globalScope.through) {
    const identifier = reference.identifier;
    if (!COMMONJS_NAMES.has(identifier.name)) continue;
    commonjs.push({
      name: /** @type {'require' | 'module' | 'exports'} */ (identifier.name),
      ...commonJsUsage(identifier, parentOf, isImportEquals),
      ...locate(identifier.loc.start),
      // parseAst gives every node its `start` offset, which ESTree's types lack.
      offset: /** @type {typeof identifier & { start: number }} */ (identifier).start,
    });
  }
  commonjs.sort((a, b) => a.offset - b.offset);
  for (const item of commonjs) delete item.offset;
  return { imports, commonjs };
}
