// Runs inside the Box: greets `name` and says which Node.js ran it.
export default function greeting(payload: { name?: string } = {}) {
  return { greeting: `Hello, ${payload.name ?? 'world'}!`, node: process.version.split('.')[0] };
}
