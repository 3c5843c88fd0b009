"""Campaign validation: every bad spec gets an error naming the exact field path."""
import json

import pytest

from dbswarm.campaign.spec import json_schema, load_campaign
from dbswarm.errors import CampaignError

BAD_SPECS = [
    ({"nme": "x"}, "nme: unknown key"),
    ({"target": {"engine": "oracle"}}, "target.engine: unknown engine 'oracle'"),
    ({"target": {"engine": "mysql", "password": "hunter2"}}, "target.password: a literal password is not allowed"),
    ({"target": {"engine": "mysql", "url": "mysql://u:pw@h/db"}}, "target.url: the URL contains a password"),
    ({"target": {"engine": "mysql", "password": {"env": "A", "file": "b"}}},
     "target.password: give exactly one of secret, env or file"),
    ({"target": {"engine": "mysql", "password": {"vault": "x"}}}, "target.password.vault: unknown key"),
    ({"target": {"engine": "mysql", "options": {"password": "abc"}}}, "target.options: option 'password'"),
    ({"workload": {"recordcount": -1}}, "workload.recordcount: Input should be greater than or equal to 1"),
    ({"workload": {"preset": "S99"}}, "workload.preset: unknown preset 'S99'"),
    ({"workload": {"readproportion": 0.5, "updateproportion": 0.4}}, "workload: proportions must sum to 1"),
    ({"workload": {"requestdistribution": "gaussian"}}, "workload.requestdistribution: Input should be"),
    ({"workload": {"fieldcount": 0}}, "workload.fieldcount: Input should be greater than or equal to 1"),
    ({"workload": {"operationcount": 0}}, "workload: operationcount 0 means no count limit"),
    ({"workload": {"readproportion": 1.5}}, "workload.readproportion: Input should be less than or equal to 1"),
    ({"matrix": {"preset": ["S1", "S77"]}}, "matrix.preset[1]: unknown preset 'S77'"),
    ({"matrix": {"threads": [4, 0]}}, "matrix.threads[1]: Input should be greater than or equal to 1"),
    ({"matrix": {"colour": ["red"]}}, "matrix.colour[0]: unknown key for a ycsb workload"),
    ({"matrix": {"workload": [{"preset": "a"}, {"family": "sysbench", "test": "oltp_foo"}]}},
     "matrix.workload[1].test: Input should be"),
    ({"matrix": {"target": [{"engine": "sqlite"}, {"engine": "mysql", "password": "x"}]}},
     "matrix.target[1].password: a literal password is not allowed"),
    ({"phases": ["run", "load"]}, "phases: phases must be distinct and in the order"),
    ({"phases": ["warmup"]}, "phases[0]: Input should be"),
    ({"fanout": {"shards": 2, "threads_per_shard": 3}}, "fanout: give threads_per_shard or shards, not both"),
    ({"fanout": {"shards": 0}}, "fanout.shards: Input should be greater than or equal to 1"),
    ({"workload": {"family": "sysbench", "tables": 0}}, "workload.tables: Input should be greater than or equal to 1"),
    ({"workload": {"family": "sysbench", "recordcount": 5}}, "workload.recordcount: unknown key for a sysbench workload"),
    ({"workload": {"family": "sysbench", "range_size": 500, "table_size": 100}}, "workload: range_size (500) exceeds"),
    ({"workload": {"family": "tpch"}}, "workload.family: unknown family 'tpch'"),
    ({"results": {"location": "x", "bogus": 1}}, "results.bogus: unknown key"),
    ({"target": {"engine": "mongodb", "url": "mongodb://h/ycsb"}, "workload": {"family": "sysbench"}},
     "target.engine: sysbench workloads need a SQL engine"),
    ({"seed": -3}, "seed: Input should be greater than or equal to 0"),
    ({"name": "bad name!"}, "name: String should match pattern"),
    ({"results": "ftp://x"}, "results.location: unsupported location 'ftp://x'"),
    ({"results": {"location": "s3://"}}, "results.location: unsupported location 's3://'"),
    ({"target": {"engine": "postgresql"}}, "target.url: required for engine postgresql, e.g. postgresql://"),
    ({"target": {"engine": "mariadb", "url": "postgresql://h/db"}}, "target.url: postgresql:// is not a mysql URL"),
    ({"matrix": {"target": ["sqlite", "mongo"]}}, "matrix.target[1].url: required for engine mongodb"),
]


@pytest.mark.parametrize("spec,message", BAD_SPECS, ids=[m.split(":")[0] + f"-{i}" for i, (_, m) in enumerate(BAD_SPECS)])
def test_bad_spec_names_the_field(spec, message):
    with pytest.raises(CampaignError) as err:
        load_campaign(spec)
    assert any(p.startswith(message) for p in err.value.problems), err.value.problems


def test_literal_password_never_echoed():
    with pytest.raises(CampaignError) as err:
        load_campaign({"target": {"engine": "mysql", "password": "hunter2-secret"}})
    assert "hunter2-secret" not in str(err.value)


def test_several_problems_reported_together():
    with pytest.raises(CampaignError) as err:
        load_campaign({"seed": -1, "phases": [], "nme": 1})
    paths = {p.split(":")[0] for p in err.value.problems}
    assert {"seed", "phases", "nme"} <= paths


def test_matrix_expands_in_order_first_axis_outermost():
    _, runs = load_campaign({"matrix": {"preset": ["S1", "S2"], "threads": [2, 8]}})
    assert [(r.workload.preset, r.workload.threads) for r in runs] == [("S1", 2), ("S1", 8), ("S2", 2), ("S2", 8)]
    assert [r.index for r in runs] == [0, 1, 2, 3]
    assert len({r.run_id for r in runs}) == 4


def test_mixed_families_drop_defaults_they_do_not_know():
    _, runs = load_campaign({"workload": {"recordcount": 500, "threads": 3},
                             "matrix": {"workload": [{"preset": "S6"}, {"family": "sysbench", "tables": 2}]}})
    assert runs[0].workload.recordcount == 500 and runs[0].workload.threads == 3
    assert runs[1].workload.family == "sysbench" and runs[1].workload.threads == 3


def test_explicit_proportions_override_preset():
    _, runs = load_campaign({"workload": {"preset": "a", "readproportion": 0.7, "updateproportion": 0.3}})
    assert runs[0].workload.mix() == {"read": 0.7, "update": 0.3}


def test_yaml_text_and_file(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("name: t\nmatrix:\n  preset: [S6]\n")
    campaign, runs = load_campaign(str(path))
    assert campaign.name == "t" and runs[0].workload.readproportion == 1.0
    with pytest.raises(CampaignError, match="no such campaign file"):
        load_campaign(str(tmp_path / "missing.yaml"))


def test_schema_is_published_json():
    schema = json_schema()
    json.dumps(schema)
    assert "YcsbWorkload" in schema["$defs"] and "SysbenchWorkload" in schema["$defs"]
    assert schema["additionalProperties"] is False


def test_published_schema_file_is_current():
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "shared" / "dbswarm" / "schema" / "campaign.schema.json"
    assert json.loads(path.read_text()) == json_schema(), "regenerate: dbswarm schema --models > " + str(path)


def test_example_campaigns_validate(monkeypatch):
    from pathlib import Path
    monkeypatch.setenv("DBSWARM_PASSWORD", "unused")  # the examples read it ({env: DBSWARM_PASSWORD})
    paths = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))
    assert len(paths) >= 5, paths
    for path in paths:
        campaign, runs = load_campaign(str(path))
        assert campaign.name and runs, path
        assert all(r.workload.family in ("ycsb", "sysbench", "tpcc", "custom") and r.workload.threads >= 1 for r in runs), path
