"""Driving a target: the worker (one shard, one phase), the campaign lock, consistency checks."""
