"""Command handlers (one per MCP tool) and the MCP server that registers them."""
