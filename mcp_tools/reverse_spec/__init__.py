"""reverse-spec (seed 000): `prepare`, `generate`, `batch`, `diff` — specs from existing code, and drift checks."""
