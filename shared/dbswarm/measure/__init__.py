"""Measurements that merge exactly, in any order (imports nothing else of dbswarm but errors)."""
