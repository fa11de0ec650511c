"""ai-loom (seed 004): line-range annotations that stay anchored, listed, read and stitched into prompts
under a character budget, over MCP and REST."""
