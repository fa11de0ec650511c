"""Code3's composition root: settings, the wiring of ports to adapters, and the `code3` CLI."""

__version__ = "0.1.0"
