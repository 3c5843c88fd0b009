"""Aggregate: merge every shard's measurement into result.json and the reports."""
from dbswarm import service


def handler(event, context):
    return service.aggregate_campaign(event)
