// The JSON Schema of a Definition's payload and result, generated from the TypeScript types of its
// handler at build time (Node only) with ts-json-schema-generator (an optional peer dependency,
// loaded on first use): why this generator and what it costs: docs/internals/build-steps.md
// "Tool facts". The handler is found syntactically (TypeScript's parser); the types of its first
// parameter and of its declared return type are appended to the entry as type aliases in memory
// (no file is written), and the generator reads them with the entry's own imports in scope.
import { createRequire } from 'node:module';
import path from 'node:path';

/** The aliases appended to the entry: the payload and the (awaited) result. */
const PAYLOAD_ALIAS = '__VitehubSandboxPayload';
const RESULT_ALIAS = '__VitehubSandboxResult';

/**
 * The compiler options of the generator's program: the module rules of docs/definitions.md; the
 * ES2022 lib only (no DOM, no `@types/*`: their parse is most of the cost, and a payload is JSON).
 */
const COMPILER_OPTIONS = {
  target: 'ES2022',
  lib: ['ES2022'],
  module: 'ESNext',
  moduleResolution: 'Bundler',
  allowImportingTsExtensions: true,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: [],
};

let loading = null;

/**
 * Parsed declaration files that do not change while the process runs (TypeScript's own lib files
 * and files under node_modules), shared by every program: the lib files are most of a program's
 * parse time. Keyed by file name and language version.
 */
const stableSources = new Map();
const isStable = (name) => /[\\/]node_modules[\\/]/.test(name);

/**
 * Loads typescript and ts-json-schema-generator as the app resolves them (from `appRoot`), else as
 * this package does. Resolves to `null` (with `reason`) when either is missing.
 */
function loadGenerator(appRoot) {
  loading ??= (async () => {
    const tryRequire = (name) => {
      for (const from of [path.join(appRoot, 'package.json'), import.meta.url]) {
        try {
          return createRequire(from)(name);
        } catch (error) {
          if (error?.code !== 'MODULE_NOT_FOUND') throw error;
        }
      }
      return null;
    };
    const generator = tryRequire('ts-json-schema-generator');
    const ts = tryRequire('typescript');
    if (!generator || !ts) return { missing: generator ? 'typescript' : 'ts-json-schema-generator' };
    return { generator, ts };
  })();
  return loading;
}

/** The function node of a Definition's handler: the default export (package) or its `run` (free-form). */
function findHandler(ts, source, kind) {
  const isFunction = (node) =>
    node && (ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node));
  const local = (name) => {
    for (const statement of source.statements) {
      if (ts.isFunctionDeclaration(statement) && statement.name?.text === name) return statement;
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name) && declaration.name.text === name) return declaration.initializer;
        }
      }
    }
    return undefined;
  };
  let exported;
  for (const statement of source.statements) {
    const modifiers = ts.canHaveModifiers(statement) ? (ts.getModifiers(statement) ?? []) : [];
    const isDefault =
      modifiers.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) &&
      modifiers.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
    if (ts.isFunctionDeclaration(statement) && isDefault) exported = statement;
    else if (ts.isExportAssignment(statement) && !statement.isExportEquals) exported = statement.expression;
  }
  while (exported && (ts.isParenthesizedExpression(exported) || ts.isAsExpression(exported)))
    exported = exported.expression;
  if (exported && ts.isIdentifier(exported)) exported = local(exported.text);
  if (kind === 'package') return isFunction(exported) ? exported : undefined;
  // free-form: defineSandbox({ run })
  const argument = exported && ts.isCallExpression(exported) ? exported.arguments[0] : undefined;
  if (!argument || !ts.isObjectLiteralExpression(argument)) return undefined;
  for (const property of argument.properties) {
    if (property.name?.getText(source) !== 'run') continue;
    if (ts.isMethodDeclaration(property)) return property;
    if (ts.isPropertyAssignment(property)) {
      const value = ts.isIdentifier(property.initializer) ? local(property.initializer.text) : property.initializer;
      return isFunction(value) ? value : undefined;
    }
  }
  return undefined;
}

/** Result types that give no outputSchema (no JSON, or not known). */
const NO_RESULT = /^(void|undefined|unknown|any|never|Response|Promise<(void|undefined|unknown|any|never|Response)>)$/;

/**
 * The text of the handler's inferred (awaited) return type, or undefined when it is not a
 * self-contained JSON-like type (`any`, a truncated or unnamed one, a Response, bytes).
 */
function inferredResultType(ts, program, file, kind) {
  const source = program.getSourceFile(file);
  const handler = source && findHandler(ts, source, kind);
  const checker = program.getTypeChecker();
  const signature = handler && checker.getSignatureFromDeclaration(handler);
  if (!signature) return undefined;
  const returned = checker.getReturnTypeOfSignature(signature);
  const awaited = checker.getAwaitedType(returned) ?? returned;
  const text = checker.typeToString(awaited, source, ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias);
  if (NO_RESULT.test(text) || /\bany\b|\.\.\.|\bResponse\b|Uint8Array|ArrayBuffer|Blob\b/.test(text)) return undefined;
  return text;
}

/**
 * The JSON Schemas of a TypeScript Definition's payload and result.
 * @param {string} appRoot absolute app root
 * @param {{ kind: 'package' | 'free-form', entry: string }} discovered `entry` relative to `appRoot`
 * @param {string} sourceText the entry's text
 * @returns {Promise<{ inputSchema?: object, outputSchema?: object, reason?: string }>} `inputSchema`
 *   when the handler's first parameter has a type annotation the generator can express (draft-07,
 *   `$ref`s into its own `definitions`); `outputSchema` for the handler's declared return type,
 *   else its inferred one (awaited; none for `any`, a Response or bytes); else `reason` (why there is no `inputSchema`, for the dev warning).
 */
export async function typeScriptToolSchemas(appRoot, discovered, sourceText) {
  if (!/\.[cm]?ts$/.test(discovered.entry)) return { reason: 'its entry is JavaScript, not TypeScript' };
  const loaded = await loadGenerator(appRoot);
  if (loaded.missing)
    return {
      reason: `${loaded.missing} is not installed, so its payload type cannot be read (npm i -D ts-json-schema-generator typescript)`,
    };
  const { ts, generator } = loaded;
  const file = path.join(appRoot, discovered.entry);
  const parsed = ts.createSourceFile(file, sourceText, ts.ScriptTarget.ES2022, true);
  const handler = findHandler(ts, parsed, discovered.kind);
  if (!handler) return { reason: 'its handler was not found as a function in the entry' };
  const payloadType = handler.parameters[0]?.type;
  if (!payloadType) return { reason: "its handler's payload parameter has no type annotation" };
  let returnType = handler.type?.getText(parsed);
  if (returnType !== undefined && NO_RESULT.test(returnType)) returnType = undefined;
  const payloadAlias = `\nexport type ${PAYLOAD_ALIAS} = Exclude<${payloadType.getText(parsed)}, undefined>;\n`;
  const resultAlias = (type) => `export type ${RESULT_ALIAS} = Awaited<${type}>;\n`;
  const options = ts.convertCompilerOptionsFromJson(COMPILER_OPTIONS, appRoot).options;
  /** A program of the entry with `appended` after its text (in memory), reusing `oldProgram`'s files. */
  const programWith = (appended, oldProgram) => {
    const host = ts.createCompilerHost(options, true);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, language, ...rest) => {
      if (path.resolve(name) === file) return ts.createSourceFile(name, `${sourceText}${appended}`, language, true);
      if (!isStable(name)) return getSourceFile(name, language, ...rest);
      const key = `${name}\0${JSON.stringify(language)}`;
      if (!stableSources.has(key)) stableSources.set(key, getSourceFile(name, language, ...rest));
      return stableSources.get(key);
    };
    return ts.createProgram({ rootNames: [file], options, host, oldProgram });
  };
  const config = { path: file, skipTypeCheck: true, expose: 'export', topRef: false, jsDoc: 'extended' };
  const schemaFor = (program, type) => {
    const schemaGenerator = new generator.SchemaGenerator(
      program,
      generator.createParser(program, { ...config, type }),
      generator.createFormatter({ ...config, type }),
      { ...config, type },
    );
    return schemaGenerator.createSchema(type);
  };
  const program = programWith(payloadAlias + (returnType === undefined ? '' : resultAlias(returnType)));
  const out = {};
  try {
    out.inputSchema = schemaFor(program, PAYLOAD_ALIAS);
  } catch (error) {
    return { reason: `its payload type could not be turned into a JSON Schema (${error?.message ?? error})` };
  }
  // An undeclared result type: the checker's inferred one, written out as a type.
  let resultProgram = program;
  if (returnType === undefined) {
    returnType = inferredResultType(ts, program, file, discovered.kind);
    if (returnType !== undefined) resultProgram = programWith(payloadAlias + resultAlias(returnType), program);
  }
  if (returnType !== undefined) {
    try {
      out.outputSchema = schemaFor(resultProgram, RESULT_ALIAS);
    } catch {
      // A result type the generator cannot express only loses the outputSchema (it is optional).
    }
  }
  return out;
}
