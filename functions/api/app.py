"""API: POST/GET/DELETE /campaigns over API Gateway (HTTP API) or a FunctionGraph APIG trigger."""
from dbswarm.run.front import api


def handler(event, context):
    return api.handle(event)
