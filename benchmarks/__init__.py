"""Benchmarks for code3: `make bench` runs benchmarks/run.py against a minimal MCP server baseline."""
