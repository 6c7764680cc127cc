"""The HTML report: one self-contained page from the lake's tables."""
