// The sandbox_exec tool in the AI SDK's tool-call loop, with no network: a scripted mock model
// (ai/test) asks for one Command, the tool runs it in a Box on the local provider, and the model's
// second step answers with the tool's result.
//
//   node examples/agent/agent.mjs
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { sandbox } from '@vite-hub/sandbox/agent';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

// Step 1: call sandbox_exec. Step 2: read the tool result from the prompt and answer with it.
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    const toolResult = prompt
      .flatMap((message) => (message.role === 'tool' ? message.content : []))
      .find((part) => part.type === 'tool-result');
    if (!toolResult) {
      const input = { command: 'node', args: ['-e', 'console.log(1+1)'] };
      return {
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'sandbox_exec', input: JSON.stringify(input) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    }
    // The sandbox_exec tool's output: JSON `{ stdout, exitCode, … }`, or the error it failed with.
    const output = /** @type {{ type: string, value: any }} */ (toolResult.output);
    const text =
      output.type === 'json'
        ? `node printed ${output.value.stdout.trim()} (exit code ${output.value.exitCode})`
        : `the tool failed: ${JSON.stringify(output.value)}`;
    return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  },
});

const capability = sandbox({ commands: ['node'] });
try {
  const result = await generateText({
    model,
    tools: capability.tools,
    stopWhen: stepCountIs(3),
    prompt: 'What is 1+1? Use node.',
  });
  for (const step of result.steps) {
    for (const call of step.toolCalls) console.log(`tool call: ${call.toolName} ${JSON.stringify(call.input)}`);
    for (const toolResult of step.toolResults) console.log(`tool result: ${JSON.stringify(toolResult.output)}`);
  }
  console.log(`answer: ${result.text}`);
} finally {
  await capability.close();
}
