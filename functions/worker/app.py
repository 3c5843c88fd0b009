"""Worker: one call of one shard's load or run phase. Stops before the platform's time
limit and answers "continue" with a checkpoint; the state machine calls it again.
With {"action": "record_failure"} it records a shard that failed for good."""
from dbswarm.run.runtime import service
from dbswarm.run.runtime.context import remaining_time


def handler(event, context):
    if event.get("action") == "record_failure":
        return service.record_shard_failure(event)
    return service.run_shard(event, remaining_seconds=remaining_time(context))
