"""Compare: check the result against a stored baseline; the verdict goes into result.json."""
from dbswarm.run.runtime import service


def handler(event, context):
    return service.compare_campaign(event)
