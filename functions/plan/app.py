"""Plan: validate the campaign, split every run into shards, write plan.json.

Event (from the state machine): {"request": <execution input>, "execution_name": ...}; the
execution's name is the campaign id. Invoked directly, the event is the request itself. With {"action": "next_step", "state": ...}:
a search's decision after each of its runs, and the next run's plan.
"""
from dbswarm.run.runtime import service


def handler(event, context):
    if event.get("action") == "next_step":  # a search: decide and plan its next run
        return service.next_step(event)
    request = dict(event.get("request") or event)
    if not request.get("campaign_id") and event.get("execution_name"):
        request["campaign_id"] = event["execution_name"]
    return service.plan_campaign(request)
