"""Prepare: the un-sharded steps of a run (create the schema before the load, indexes
after it, drop at cleanup); with {"action": "arm"}, the start instant of a phase (and its
measured window's start edge); with {"action": "window"}, the window's end edge; with
{"action": "check_range" | "check_merge"}, a range of a consistency check, or their merge."""
from dbswarm.run.runtime import service


def handler(event, context):
    if event.get("action") == "arm":
        return service.arm(event)
    if event.get("action") == "window":
        return service.window(event)
    if event.get("action") in ("check_range", "check_merge"):
        return service.check_call(event)
    return service.prepare_run(event)
