// A scripted MCP client on the official TypeScript SDK (@modelcontextprotocol/sdk), for the e2e tests: the client
// that Claude Code and the MCP Inspector are built on, so what it shows is what their users see.
//
//   node driver.mjs SDK_PREFIX      (SDK_PREFIX: the npm prefix holding node_modules/@modelcontextprotocol/sdk)
//
// stdin, one JSON object a line:
//   first   {"transport": "stdio", "command": ..., "args": [...], "env": {...}, "cwd": ...}
//        or {"transport": "http", "url": ".../mcp", "token": ...}
//   then    {"tool": NAME, "arguments": {...}}  one call each
// stdout, one JSON object a line:
//   after connecting: {"connected": {"server": serverInfo, "tools": [names]}}  (listTools has run: the SDK then
//                     checks every answer of a tool with an outputSchema against it)
//   per call:         {"result": CallToolResult} or {"error": {"code", "message", "data"}} (what callTool threw)
// The lines are answered in order, so the caller may act between calls (a merge, the clock).
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { join } from "node:path";

const prefix = process.argv[2];
if (!prefix) {
  process.stderr.write("usage: node driver.mjs SDK_PREFIX\n");
  process.exit(2);
}
const require = createRequire(join(prefix, "node_modules", "_"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

function transportFor(config) {
  if (config.transport === "stdio") {
    return new StdioClientTransport({
      command: config.command, args: config.args ?? [], env: config.env, cwd: config.cwd, stderr: "inherit",
    });
  }
  if (config.transport === "http") {
    return new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: { Authorization: `Bearer ${config.token}` } },
    });
  }
  throw new Error(`unknown transport ${config.transport}`);
}

function thrown(error) {
  return { error: { code: error?.code ?? null, message: String(error?.message ?? error), data: error?.data ?? null } };
}

const write = (value) => process.stdout.write(JSON.stringify(value) + "\n");
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
let client = null;
for await (const line of lines) {
  if (!line.trim()) continue;
  const message = JSON.parse(line);
  if (client === null) {
    client = new Client({ name: "code3-e2e-ts-driver", version: "1.0.0" });
    await client.connect(transportFor(message));
    const listed = await client.listTools();
    write({ connected: { server: client.getServerVersion(), tools: listed.tools.map((tool) => tool.name) } });
    continue;
  }
  try {
    write({ result: await client.callTool({ name: message.tool, arguments: message.arguments ?? {} }) });
  } catch (error) {
    write(thrown(error));
  }
}
if (client !== null) await client.close();
