"""The outside world behind small ports: forge, chain, keystore, spec writer, event store settings."""
