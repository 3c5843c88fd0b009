"""Plan: validate the campaign, split every run into shards, write plan.json.

Event (from the state machine): {"request": <execution input>, "execution_name": ...}; the
execution's name is the campaign id. Invoked directly, the event is the request itself.
"""
from dbswarm import service


def handler(event, context):
    request = dict(event.get("request") or event)
    if not request.get("campaign_id") and event.get("execution_name"):
        request["campaign_id"] = event["execution_name"]
    return service.plan_campaign(request)
