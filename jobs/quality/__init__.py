"""Data quality: great-expectations suites over the decoded and replayed tables."""
