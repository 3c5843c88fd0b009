"""Prepare: the un-sharded steps of a run (create the schema before the load, indexes
after it, drop at cleanup) and, with {"action": "arm"}, the start instant of a phase."""
from dbswarm import service


def handler(event, context):
    if event.get("action") == "arm":
        return service.arm(event)
    return service.prepare_run(event)
