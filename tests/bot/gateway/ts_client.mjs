// The official TypeScript MCP client (@modelcontextprotocol/sdk, from tests/node_modules), as an
// application would use it, with the SDK's default timeouts: connect to URL with TOKEN, then
// `list` the tools or `call TOOL ARGS_JSON`. Prints one JSON line: {"ok": true, "result": ...}
// or {"ok": false, "error": "...", "status": <HTTP status, when the transport saw one>}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, command, ...rest] = process.argv.slice(2);
const headers = token ? { Authorization: `Bearer ${token}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
const client = new Client({ name: "ts-sdk-client", version: "1.0.0" });

let answer;
try {
  await client.connect(transport);
  let result;
  if (command === "list") {
    result = await client.listTools();
  } else if (command === "call") {
    result = await client.callTool({ name: rest[0], arguments: JSON.parse(rest[1] || "{}") });
  } else {
    throw new Error(`unknown command ${command}`);
  }
  answer = { ok: true, result };
} catch (error) {
  answer = { ok: false, error: String(error), status: error.code ?? null };
}
try {
  await client.close();
} catch {
  // closing a transport that never connected
}
console.log(JSON.stringify(answer));
