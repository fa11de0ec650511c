"""CodeNexus (seed 002): tags, comments and typed relationships between a project's files, as events,
read through the CodeNexus index; tools, resources, prompts and subscriptions over MCP."""
