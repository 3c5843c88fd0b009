"""Credentials: secret references resolved at the last moment, and the redaction of every output."""
