"""The bounty lifecycle of the Code3 seed: spec_mcp.* and server_mcp.* handlers, the webhook, chain sync,
the forge mirror and audit verify."""
