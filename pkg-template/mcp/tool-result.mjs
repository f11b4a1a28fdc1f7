// A Run's Response as an MCP `tools/call` result (spec 2025-06-18, "Tool Result"):
// - 2xx `application/json`: `structuredContent` plus the same JSON as a text block. An object is
//   `structuredContent` as is; any other JSON value (array, string, number, boolean, null) is
//   wrapped as `{ result: value }`, since spec 2025-06-18 allows only an object there;
// - 204: one text block `(no result)`, no `structuredContent`;
// - 2xx `text/*`: the text;
// - any other 2xx body: an embedded resource (`{ type: 'resource', resource: { uri, mimeType, blob } }`,
//   base64), URI `sandbox://<name>/result`;
// - a non-2xx Response: `isError: true` and one text block `<SANDBOX_*>: <message>` from its
//   `SandboxErrorBody` (`_meta['vite-hub/sandbox'].error` holds `{ code, message, details? }`).

/** The `_meta` key under which a failed call's error object travels. */
export const META_KEY = 'vite-hub/sandbox';

/** A tool result with `isError: true` for a `SANDBOX_*` error (`{ code, message, details? }`). */
export function errorResult(error) {
  const body = { code: error.code, message: error.message };
  if (error.details && typeof error.details === 'object') body.details = error.details;
  return {
    content: [{ type: 'text', text: `${error.code}: ${error.message}` }],
    isError: true,
    _meta: { [META_KEY]: { error: body } },
  };
}

/** `structuredContent` of a JSON result: an object as is, anything else as `{ result }`. */
export function structuredOf(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { result: value };
}

/**
 * @param {string} name the Definition's name (names the resource of a binary result)
 * @param {Response} response what the Run answered
 */
export async function toolResultOf(name, response) {
  const type = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (!response.ok) {
    const text = await response.text();
    let error;
    try {
      error = JSON.parse(text)?.error;
    } catch {}
    if (typeof error?.code !== 'string')
      error = {
        code: 'SANDBOX_HANDLER_ERROR',
        message: `the Definition answered ${response.status}: ${text.slice(0, 4096)}`,
      };
    return errorResult(error);
  }
  if (response.status === 204) return { content: [{ type: 'text', text: '(no result)' }] };
  if (type === 'application/json' || type.endsWith('+json')) {
    const text = await response.text();
    return { content: [{ type: 'text', text }], structuredContent: structuredOf(JSON.parse(text)) };
  }
  if (type.startsWith('text/')) return { content: [{ type: 'text', text: await response.text() }] };
  const bytes = new Uint8Array(await response.arrayBuffer());
  return {
    content: [
      {
        type: 'resource',
        resource: {
          uri: `sandbox://${encodeURIComponent(name)}/result`,
          mimeType: type || 'application/octet-stream',
          blob: base64(bytes),
        },
      },
    ],
  };
}

/** Base64 of bytes, in Node and in Workers (no Buffer there). */
function base64(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
