// A client of the interactive-terminal WebSocket (docs/sessions.md#interactive-terminal), as the
// tests drive it: the `ws` package (Node 20 has no global WebSocket), messages collected as they
// come. `output` is the terminal's output so far (text), `exit` its `{ type: 'exit' }` message.
import WebSocket from 'ws';

/**
 * Connects to `url` (with `?token=` when `queryToken`) and resolves once open, or rejects with the
 * refusal (`error.status`: the HTTP status of a refused upgrade).
 */
export async function connectTerminal(url, token, { queryToken = false } = {}) {
  const ws = new WebSocket(queryToken ? `${url}?token=${encodeURIComponent(token)}` : url);
  const terminal = { ws, output: '', messages: [], exit: null, closed: null };
  terminal.closed = new Promise((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  ws.on('message', (data, isBinary) => {
    if (isBinary) terminal.output += data.toString('utf8');
    else {
      const message = JSON.parse(data.toString('utf8'));
      terminal.messages.push(message);
      if (message.type === 'exit') terminal.exit = message;
    }
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error(`refused: ${res.statusCode}`), { status: res.statusCode })),
    );
    ws.once('error', reject);
  });
  return terminal;
}

/** Resolves once the terminal's output matches `pattern` (the socket may close first: rejects). */
export function outputMatching(terminal, pattern) {
  return new Promise((resolve, reject) => {
    const check = () => {
      const found = pattern.exec(terminal.output);
      if (found) {
        terminal.ws.off('message', onMessage);
        terminal.ws.off('close', onClose);
        resolve(found);
      }
    };
    const onMessage = () => setImmediate(check);
    const onClose = () => {
      check();
      reject(new Error(`the terminal closed before ${pattern}; output: ${JSON.stringify(terminal.output)}`));
    };
    terminal.ws.on('message', onMessage);
    terminal.ws.once('close', onClose);
    check();
  });
}

/** Sends terminal input (binary, as the protocol asks). */
export function type(terminal, text) {
  terminal.ws.send(Buffer.from(text, 'utf8'));
}
