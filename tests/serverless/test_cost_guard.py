"""The cost estimate and its guards on a deployment (template.yaml in moto, functions in their
own processes): the API's 202 answer carries the estimate; a campaign over its ``max_cost``
gets a 400 naming the estimate; the deployment's cap (template parameter MaxCampaignCost,
DBSWARM_MAX_COST in the Plan and Api functions) refuses in the API and, for an execution
started without the API (the schedule, ``dbswarm submit --state-machine``), in the plan step
before anything is written."""
import uuid

import pytest

from dbswarm.campaign.cost import estimate
from dbswarm.campaign.spec import load_campaign
from dbswarm.run.runtime.template import load_yaml

from .conftest import FAST, ROOT, call_api, use_api_environment

CAP = 0.000001  # USD: below any campaign's estimate (its Step Functions transitions alone cost more)
NOOP = "name: cost-guard\nseed: 1\ntarget: {engine: noop}\nworkload: {preset: S2, recordcount: 100, operationcount: 200}\n"


@pytest.fixture(scope="module")
def capped(aws_env):
    """A deployment with MaxCampaignCost set: the parameter reaches the functions' environment."""
    from dbswarm.run.runtime.emulator import LocalCloud
    with LocalCloud(ROOT / "template.yaml", {**FAST, "MaxCampaignCost": CAP}, emulate_for_functions=True) as c:
        yield c


@pytest.fixture
def api_of(capped, monkeypatch):
    """The Api function's environment from the capped deployment, for its handler in-process."""
    return use_api_environment(capped, monkeypatch)


def test_max_campaign_cost_is_wired_to_the_plan_and_api_functions(capped):
    doc = load_yaml(ROOT / "template.yaml")
    param = doc["Parameters"]["MaxCampaignCost"]
    assert param["Type"] == "Number" and param["Default"] == 0 and param["MinValue"] == 0
    for name in ("PlanFunction", "ApiFunction"):
        env = doc["Resources"][name]["Properties"]["Environment"]["Variables"]
        assert env["DBSWARM_MAX_COST"] == {"Ref": "MaxCampaignCost"}, name
        assert float(capped.functions[name].environment["DBSWARM_MAX_COST"]) == CAP, name


def test_the_api_refuses_over_the_deployments_cap_with_the_estimate(api_of):
    code, body = call_api("POST", "/campaigns", NOOP)
    assert code == 400, body
    assert "over this deployment's cap (MaxCampaignCost) of 0.00000100 USD" in body["error"], body
    assert "GB-s" in body["error"] and "state transitions" in body["error"], body
    listed = api_of.client("s3").list_objects_v2(Bucket=api_of.bucket(), Prefix="campaigns/")
    assert not listed.get("Contents"), "a refused campaign stored nothing"


def test_the_api_answers_202_with_the_estimate_and_400_over_max_cost(api_of, monkeypatch):
    monkeypatch.setenv("DBSWARM_MAX_COST", "0")  # no cap in the API: the campaign's own max_cost decides
    code, body = call_api("POST", "/campaigns", NOOP + "max_cost: 0.00001\n")
    assert code == 400, body
    assert body["error"].startswith("max_cost: the campaign would cost about "), body
    assert "over the campaign's max_cost of 0.0000100 USD" in body["error"] and "GB-s" in body["error"], body

    code, body = call_api("POST", "/campaigns", NOOP + "max_cost: 10\n")
    assert code == 202, body
    est = body["cost_estimate"]
    assert est == estimate(*load_campaign(NOOP + "max_cost: 10\n"))  # the same figures as `dbswarm validate`
    assert est["lambda"]["worker_calls"] == 2 and est["step_functions"]["state_transitions"] > 0
    assert 0 < est["price"]["total"] < 10 and est["prices"]["region"] and est["prices"]["date"]
    # the plan step (its own process, the template's DBSWARM_MAX_COST) refuses the execution too
    desc = api_of.wait(body["execution_arn"], timeout_s=240)
    assert desc["status"] == "FAILED", desc
    assert "this deployment's cap (MaxCampaignCost)" in (desc.get("cause") or ""), desc


def test_the_plan_step_refuses_an_execution_over_the_cap_before_writing(capped):
    cid = f"capped-{uuid.uuid4().hex[:8]}"
    arn = capped.start({"campaign": load_yaml_text(NOOP), "results": f"s3://{capped.bucket()}", "lead_seconds": 0.5},
                       name=cid)
    desc = capped.wait(arn, timeout_s=240)
    assert desc["status"] == "FAILED", desc
    assert "max_cost: the campaign would cost about" in desc["cause"] and "MaxCampaignCost" in desc["cause"], desc
    trace = capped.trace(arn)["states_entered"]
    assert trace.get("Plan") == 1 and not trace.get("Work"), trace  # nothing ran
    listed = capped.client("s3").list_objects_v2(Bucket=capped.bucket(), Prefix=f"campaigns/{cid}/")
    assert not [o["Key"] for o in listed.get("Contents", []) if o["Key"].endswith("plan.json")]


def load_yaml_text(text: str) -> dict:
    import yaml
    return yaml.safe_load(text)
