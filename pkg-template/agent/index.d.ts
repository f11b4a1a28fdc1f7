/**
 * `@vite-hub/sandbox/agent`: the `sandbox({ commands, env })` capability and its one tool,
 * `sandbox_exec`, which runs one allowed executable (no shell) with only the allowed env names on
 * a Session of `@vite-hub/sandbox`. Contract: vitehub-sandbox-contract.md §7.
 *
 * Every check is in agent/rules.mjs; a refused input throws a `SandboxError` with code
 * `SANDBOX_INVALID_ARGUMENT` (status 400) before any Session is opened, so it never reaches a Box.
 * An allowed executable can still run other programs through its own options (`node -e`,
 * `find -exec`, `git -c alias.x=!cmd`): the Box is the security boundary, not the allow-lists.
 */
import type { OpenSandboxSessionOptions, SandboxError, SandboxExecResult } from '@vite-hub/sandbox';

/** The tool's name. */
export declare const SANDBOX_EXEC: 'sandbox_exec';

/**
 * The loader and interpreter hooks no `sandbox({ env })` may allow and no input may set, compared
 * in any case: names, and prefixes ending in `*`: `PATH`, `ENV`, `BASH_ENV`, `SHELLOPTS`,
 * `BASHOPTS`, `PS4`, `PROMPT_COMMAND`, `NODE_OPTIONS`, `NODE_PATH`, `NODE_REPL_EXTERNAL_MODULE`,
 * `PERLLIB`, `PHPRC`, `PHP_INI_SCAN_DIR`, `GCONV_PATH`, `LOCPATH`, `GLIBC_TUNABLES`,
 * `JAVA_TOOL_OPTIONS`, `_JAVA_OPTIONS`, `JDK_JAVA_OPTIONS`, `TAR_OPTIONS`, `LESSOPEN`,
 * `LESSCLOSE`, `PAGER`, `EDITOR`, `VISUAL`, `PREFIX`, `LD_*`, `DYLD_*`, `PYTHON*`, `GIT_*`,
 * `PERL5*`, `RUBY*`, `NPM_CONFIG_*`, `LUA_INIT*`, `OPENSSL_*`. Not exhaustive.
 */
export declare const BLOCKED_ENV_NAMES: readonly string[];

/** What `sandbox_exec` needs of a Session (`openSandboxSession()`'s `SandboxSession` has it). */
export interface SandboxExecSession {
  /**
   * Runs `command` with `args` in the Box (no shell). `timeout` is in ms; `signal` aborts the
   * Command.
   */
  exec(
    command: string,
    args?: string[],
    options?: { cwd?: string; env?: Record<string, string>; timeout?: number; signal?: AbortSignal },
  ): Promise<SandboxExecResult>;
  /** Closes the Session and its Box (idempotent). */
  close?(): Promise<void> | void;
}

/** The input of one `sandbox_exec` call (the tool's JSON Schema, checked again at call time). */
export interface SandboxExecInput {
  /** Exactly one of the allowed commands. */
  command: string;
  /** At most 128 strings of at most 32768 characters each; default `[]`. */
  args?: string[];
  /** Working directory in the Box, passed unchanged. */
  cwd?: string;
  /**
   * Only names that `sandbox({ env })` allows, exactly (none by default: a non-empty `env` is then
   * refused); never one of `BLOCKED_ENV_NAMES`. At most 64 entries; values at most 32768
   * characters.
   */
  env?: Record<string, string>;
  /** Kill the Command after this many ms: a positive integer ≤ 2147483647. */
  timeout?: number;
}

/** The JSON Schema of the tool input (a plain object, draft-07 and 2020-12 alike). */
export type SandboxExecJsonSchema = Record<string, unknown>;

/**
 * The `sandbox_exec` tool in the AI SDK's shape (`generateText({ tools: { sandbox_exec } })`):
 * `inputSchema` is a Standard Schema with Standard JSON Schema (AI SDK 6 and later read both).
 */
export interface SandboxExecTool {
  type: 'function';
  /**
   * `Run one allowed executable in an isolated sandbox. Allowed commands: a, b.`, then
   * ` Allowed env names: A, B.` when `sandbox({ env })` allows some.
   */
  description: string;
  inputSchema: {
    '~standard': {
      version: 1;
      vendor: '@vite-hub/sandbox';
      validate(value: unknown): { value: SandboxExecInput } | { issues: ReadonlyArray<{ message: string }> };
      types?: { input: SandboxExecInput; output: SandboxExecInput };
      jsonSchema: {
        /** `target`: `'draft-07'` (default) or `'draft-2020-12'`; other targets throw. */
        input(options?: { target?: string }): SandboxExecJsonSchema;
        output(options?: { target?: string }): SandboxExecJsonSchema;
      };
    };
  };
  /**
   * Checks `input` (throws `SandboxError` `SANDBOX_INVALID_ARGUMENT` first), opens the
   * capability's Session if none is open, then runs the Command with `abortSignal`: an abort
   * kills the Command (the Session's `exec` does) and rejects with the signal's reason.
   */
  execute(input: SandboxExecInput, options?: { abortSignal?: AbortSignal }): Promise<SandboxExecToolResult>;
}

/**
 * What `sandbox_exec` gives back: the Session exec result's exit state and outputs (the last
 * 16 MiB, 16777216 bytes, of each stream, UTF-8), and `truncated: true` when either stream printed
 * more and lost its beginning (absent otherwise), so the agent knows the output is cut.
 */
export interface SandboxExecToolResult {
  exitCode: number;
  ok: boolean;
  stdout: string;
  stderr: string;
  truncated?: true;
}

/** One entry of an MCP `tools/list` result. */
export interface SandboxExecMcpTool {
  name: 'sandbox_exec';
  description: string;
  inputSchema: SandboxExecJsonSchema;
  outputSchema: SandboxExecJsonSchema;
}

/** An MCP `tools/call` result. */
export interface SandboxExecMcpResult {
  /** One text item: the JSON of the result, or `<code>: <message>` of a refused input. */
  content: Array<{ type: 'text'; text: string }>;
  /** The result itself (absent when the input was refused). */
  structuredContent?: SandboxExecToolResult;
  /** True for a refused input or a Command that exited non-zero. */
  isError: boolean;
}

export interface SandboxCapabilityOptions {
  /**
   * The executables the agent may run: a non-empty array of names matching `^[A-Za-z0-9_.-]+$`
   * (`'pnpm test'` throws: executable names only, not shell command strings). Copied and frozen.
   */
  commands: string[];
  /**
   * The env names a `sandbox_exec` input may set, compared exactly (`CI` allows `CI`, not `ci`);
   * default none, so an input with a non-empty `env` is refused. Copied and frozen. Each name
   * matches `^[A-Za-z_][A-Za-z0-9_]*$` and is none of `BLOCKED_ENV_NAMES` (in any case): those
   * throw `SandboxError` `SANDBOX_INVALID_ARGUMENT` here, and in an input they are refused with
   * the same code whatever this list says. An input name not on the list is refused with
   * `SANDBOX_INVALID_ARGUMENT` too, naming it and how to allow it. Allow only names whose value
   * cannot make a program run other code.
   */
  env?: readonly string[];
  /**
   * Where the Session comes from: a function returning one (or a promise of one), or the options of
   * `openSandboxSession`; default `openSandboxSession()`. Opened on the first allowed call, kept
   * for the capability's life, closed by `close()`.
   */
  session?: (() => SandboxExecSession | Promise<SandboxExecSession>) | OpenSandboxSessionOptions;
}

export interface SandboxCapability {
  name: 'sandbox';
  /** The frozen copy of `commands`. */
  readonly commands: readonly string[];
  /** The frozen copy of `env`, without repeats; `[]` when none is allowed. */
  readonly env: readonly string[];
  /** `{ sandbox_exec }`, for `generateText({ tools })`. */
  readonly tools: { readonly sandbox_exec: SandboxExecTool };
  /** The MCP `tools/list` entries. */
  mcpTools(): SandboxExecMcpTool[];
  /**
   * Serves an MCP `tools/call` (`params`: `{ name, arguments }`). A refused input or a non-zero
   * exit resolves with `isError: true`; an unknown name rejects with `SANDBOX_INVALID_ARGUMENT`;
   * an abort through `signal` rejects.
   */
  callMcpTool(
    params: { name: string; arguments?: Record<string, unknown> },
    options?: { signal?: AbortSignal },
  ): Promise<SandboxExecMcpResult>;
  /**
   * Closes the Session, if one was opened (idempotent); later calls reject with `SandboxError`
   * `SANDBOX_INVALID_STATE` (409). Rejects when closing the Box failed.
   */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Declares the capability.
 * @throws {SandboxError} `SANDBOX_INVALID_ARGUMENT` when `commands` is empty, not an array, or
 *   holds a name that is not an executable name; when `env` is not an array, or holds a name
 *   that is not an env name or is one of `BLOCKED_ENV_NAMES` (in any case).
 */
export declare function sandbox(options: SandboxCapabilityOptions): SandboxCapability;

/**
 * One Definition as an AI SDK tool (`generateText({ tools: await definitionTools() })`), in the
 * shape of {@link SandboxExecTool}. Its facts come from the Vite plugin's generated registry
 * (docs/definitions.md "As a tool").
 */
export interface DefinitionTool {
  type: 'function';
  /** `defineSandbox({ description })`, else the folder's `package.json` description, else `Runs the Sandbox Definition "<name>".` */
  description: string;
  /**
   * A Standard Schema with Standard JSON Schema: `jsonSchema.input()` gives the Definition's
   * inputSchema (the JSON Schema of its declared Standard Schema, of its TypeScript payload type, or
   * `{ "type": "object" }`; its `$schema` names its dialect) for target `'draft-07'` (default, what
   * the AI SDK asks) or `'draft-2020-12'`, other targets throw. `validate` is the check of `execute`.
   */
  inputSchema: {
    '~standard': {
      version: 1;
      vendor: '@vite-hub/sandbox';
      validate(
        value: unknown,
      ): Promise<
        { value: unknown } | { issues: ReadonlyArray<{ message: string; path: ReadonlyArray<string | number> }> }
      >;
      jsonSchema: {
        input(options?: { target?: string }): Record<string, unknown>;
        output(options?: { target?: string }): Record<string, unknown>;
      };
    };
  };
  /** The JSON Schema of the result, when the handler's return type (declared or inferred) is an object type; not checked at run time. */
  outputSchema?: DefinitionTool['inputSchema'];
  /**
   * Checks `input` against the inputSchema, then `runSandbox(name, input, { signal: abortSignal })`
   * and decodes the Response: JSON parsed, `204` → `null`, `text/*` → a string, other bytes →
   * `{ contentType, base64 }`. An abort stops the Run and its Box and rejects with the signal's reason.
   * @throws {SandboxError} `SANDBOX_INVALID_ARGUMENT` (400) for a payload the inputSchema refuses,
   *   before any Box opens: the message lists `payload.<path>: <message>` (a missing key:
   *   `payload.<key>: is required`), `details.key` is the first failing key as a path (`text`,
   *   `items[2].name`), `details.issues` all of them as `{ path, keyword, message }`; a failed Run:
   *   the code, message and `details` of its error Response (`{"error":{code,message,details}}`); a
   *   handler's own non-2xx Response: `SANDBOX_HANDLER_ERROR` with its status and the start of its
   *   body (at most 4096 characters).
   */
  execute(input: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
}

/**
 * Every Definition of the app (or those named) as an AI SDK 6 tool, keyed by Definition name, in
 * name order (or the order of `definitions`), beside the `sandbox_exec` of {@link sandbox}.
 * Definitions registered by hand (no Vite plugin) are listed by name, untyped.
 * @throws {SandboxError} `SANDBOX_NOT_FOUND` (404) naming a name in `definitions` the app does not
 *   have; `SANDBOX_INVALID_ARGUMENT` (400) when `definitions` is not an array of strings.
 */
export declare function definitionTools(options?: {
  /** The Definition names to give tools for; default every Definition. */
  definitions?: string[];
}): Promise<Readonly<Record<string, DefinitionTool>>>;

export type { SandboxError, SandboxExecResult };
