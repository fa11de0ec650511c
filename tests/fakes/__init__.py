"""Loopback stand-ins of the real services (GitHub REST + git smart HTTP, the Aptos fullnode), started by tests."""
