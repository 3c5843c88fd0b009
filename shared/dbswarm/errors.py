"""Exceptions shared by every part of dbswarm."""


class DbswarmError(Exception):
    """Base class: an error dbswarm reports to the user as it is (no traceback needed)."""


class CampaignError(DbswarmError):
    """A campaign file is invalid. ``problems`` holds one "field.path: what is wrong" per line."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("invalid campaign:\n" + "\n".join(f"  - {p}" for p in self.problems))


class SecretError(DbswarmError):
    """A secret reference cannot be resolved (the message never contains the secret)."""


class BindingError(DbswarmError):
    """A binding name is unknown, registered twice, or its driver is missing."""
