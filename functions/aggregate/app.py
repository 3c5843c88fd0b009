"""Aggregate: merge every shard's measurement into result.json and the reports."""
from dbswarm.run.runtime import service


def handler(event, context):
    return service.aggregate_campaign(event)
