"""Read models of code knowledge: the CodeNexus index and the annotation store."""
