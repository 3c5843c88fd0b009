"""Regression verdicts: the statistics and the compare step."""
