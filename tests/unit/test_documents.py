"""The typed documents between the steps: round trips, clear errors, versions, and the
published JSON Schema of result.json against what a real campaign writes."""
import json
from pathlib import Path

import jsonschema
import pytest

from dbswarm.campaign.plan import make_plan
from dbswarm.campaign.spec import load_campaign
from dbswarm.documents import (
    DocumentError,
    Plan,
    PrepareEvent,
    ShardAnswer,
    ShardEvent,
    ShardResult,
    result_json_schema,
)
from dbswarm.results.store import open_store
from dbswarm.run.runtime import service

ROOT = Path(__file__).resolve().parents[2]


def _plan():
    campaign, runs = load_campaign({"name": "docs", "seed": 9, "fanout": {"shards": 3},
                                    "matrix": {"workload": [{"preset": "S3", "threads": 5, "target": 100},
                                                            {"family": "sysbench", "tables": 2, "threads": 4}]}})
    return make_plan(campaign, runs, "docs-1", sqlite_url="/tmp/x.db")


def test_plan_round_trips_through_json():
    plan = _plan()
    text = json.dumps(plan.to_dict())
    again = Plan.of(json.loads(text))
    assert again == plan and again.to_dict() == plan.to_dict()
    assert [r.family for r in again.runs] == ["ycsb", "sysbench"]
    assert again.run(again.runs[1].run_id).shards[2].thread_offset == 3
    assert sum(s.target for s in again.runs[0].shards) == pytest.approx(100)


def test_a_plan_from_a_newer_dbswarm_is_refused_not_misread():
    doc = _plan().to_dict()
    doc["schema_version"] = 2
    with pytest.raises(DocumentError, match="schema_version 2 is newer than this dbswarm reads"):
        Plan.of(doc)


def test_events_name_the_field_that_is_wrong():
    base = {"store": "/tmp/r", "campaign_id": "c", "run_id": "000"}
    ev = ShardEvent.of(dict(base, phase="run", shard=2, checkpoint=None, start_at=None, max_call_seconds=None,
                            last={"status": "new"}))  # extra state-machine fields are ignored
    assert ev.shard == 2 and ev.checkpoint is None
    with pytest.raises(DocumentError, match="phase"):
        ShardEvent.of(dict(base, phase="walk", shard=0))
    with pytest.raises(DocumentError, match="shard"):
        ShardEvent.of(dict(base, phase="run", shard=-1))
    with pytest.raises(DocumentError, match="stage"):
        PrepareEvent.of(dict(base, stage="before_lunch"))
    with pytest.raises(DocumentError, match="run_id"):
        service.run_shard({"store": "/tmp/r", "campaign_id": "c", "phase": "run", "shard": 0})


def test_shard_result_and_answer_round_trip_from_a_real_shard(tmp_path):
    out = service.plan_campaign({"campaign": {"name": "d", "workload": {"preset": "S3", "recordcount": 200,
                                                                        "operationcount": 300, "threads": 2},
                                              "phases": ["prepare", "load", "run"], "fanout": {"shards": 1}},
                                 "results": str(tmp_path)})
    base = {"store": out["store"], "campaign_id": out["campaign_id"], "run_id": out["runs"][0]["run_id"], "shard": 0}
    service.prepare_run(dict(base, stage="before_load"))
    service.run_shard(dict(base, phase="load"))
    answer = ShardAnswer.of(service.run_shard(dict(base, phase="run")))
    assert answer.status == "done" and answer.ops == 300
    raw = open_store(out["store"]).get_json(answer.result_key)
    doc = ShardResult.of(raw)
    assert doc.to_dict() == raw and doc.binding.engine == "sqlite" and doc.threads == 2
    assert doc.schema_version == 1 and doc.kind == "dbswarm-shard-result"


def test_result_json_of_a_campaign_matches_the_published_schema(tmp_path):
    published = json.loads((ROOT / "shared" / "dbswarm" / "schema" / "result.schema.json").read_text())
    assert published == result_json_schema(), "regenerate: dbswarm schema --models --result > shared/dbswarm/schema/result.schema.json"
    out = service.run_steps({"name": "s", "workload": {"preset": "S3", "recordcount": 200, "operationcount": 200},
                             "matrix": {"workload": [{"preset": "S3"}, {"family": "sysbench", "tables": 1,
                                                                         "table_size": 100, "events": 50}]}},
                            str(tmp_path), lambda ev, n: [service.run_shard(dict(ev, shard=i)) for i in range(n)],
                            lead_seconds=0)
    result = open_store(out["store"]).get_json(out["result_key"])
    jsonschema.Draft202012Validator(published).validate(result)
    broken = dict(result, runs=[dict(result["runs"][0], phases={"run": {"phase": "run", "status": "fine"}})])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(published).validate(broken)
