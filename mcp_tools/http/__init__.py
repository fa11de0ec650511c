"""`code3 serve`: one HTTP process on loopback — MCP streamable HTTP at /mcp, the ai-loom REST twins under
/api, the web page at / and the GitHub webhook — one module per idea:

- `tokens`: the serve token, its file, its rotation and `LiveToken` (the token as it is now);
- `gate`: the bearer check, the Host/Origin check and `Front`, the ASGI gate every request passes first;
- `limits`: bounded request bodies;
- `jsonrpc`: the JSON-RPC errors the front answers itself, and seed 002's `data` on the SDK transport's own;
- `health`: /healthz, /readyz and /metrics;
- `app`: `build_app`, which assembles the SDK's app, the routes and the front;
- `runner`: `serve`, uvicorn and the signals.

The package imports nothing here, so the web pages (`mcp_tools.web`) can use `gate` without importing the app
that assembles them.
"""
