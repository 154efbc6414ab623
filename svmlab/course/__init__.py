"""The instructor's toolkit (placeholder docstring, completed below)."""
