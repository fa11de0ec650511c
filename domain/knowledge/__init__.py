"""The code-knowledge domain: skeletons and drift (reverse-spec), file tags, comments and relationships (CodeNexus),
annotations, their anchors and stitching (ai-loom)."""
