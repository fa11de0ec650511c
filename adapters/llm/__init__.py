"""The LLM port and its implementations: the Anthropic Messages API (anthropic SDK), and the offline
writers used when no key is configured. Importing this package does not import the anthropic SDK."""
