"""`dbswarm validate` says everything `run` would refuse, at once: password references resolved
(never printed), every problem of the file in one answer, the nearest valid name for an
unknown key; and a run that fails before any shard ran says so in one line."""
import pytest

from dbswarm.campaign.spec import load_campaign
from dbswarm.cli import main
from dbswarm.errors import CampaignError, DbswarmError, NotRunnableHere

CAMPAIGN = """\
name: envref
target: {engine: postgresql, url: "postgresql://dbswarm@127.0.0.1:5/dbswarm", password: {env: DBSWARM_T35_PASS}}
workload: {recordcount: 100, operationcount: 100}
"""


def test_validate_resolves_an_env_reference_and_names_the_unset_variable(tmp_path, monkeypatch, capsys):
    spec = tmp_path / "c.yaml"
    spec.write_text(CAMPAIGN)
    monkeypatch.delenv("DBSWARM_T35_PASS", raising=False)
    assert main(["validate", str(spec)]) == 10   # valid, but not runnable here: not exit 2 (issue 58, item 5)
    out = capsys.readouterr()
    assert "target.password: environment variable DBSWARM_T35_PASS is not set" in out.err
    assert "valid campaign, but it cannot run here" in out.err and "invalid" not in out.err
    assert "valid" not in out.out
    monkeypatch.setenv("DBSWARM_T35_PASS", "s3cr3t-value-35")
    assert main(["validate", str(spec)]) == 0
    out = capsys.readouterr()
    assert "valid, 1 run" in out.out and "s3cr3t-value-35" not in out.out + out.err


def test_an_unreadable_file_reference_is_exit_10_naming_the_file(tmp_path, capsys):
    """Issue 58 item 5: a {file: PATH} that cannot be read is the same answer as an unset
    variable (valid, cannot run here: exit 10 from validate and run), naming the file; nothing ran."""
    missing = tmp_path / "no-such-password-file"
    spec = tmp_path / "c.yaml"
    spec.write_text(CAMPAIGN.replace("{env: DBSWARM_T35_PASS}", f"{{file: {missing}}}"))
    for command in (["validate", str(spec)], ["run", str(spec), "--results", str(tmp_path / "r"), "--quiet"]):
        assert main(command) == 10, command
        err = capsys.readouterr().err
        assert f"target.password: cannot read secret file {missing}" in err, err
        assert "valid campaign, but it cannot run here" in err and "invalid" not in err
    assert not (tmp_path / "r").exists()


def test_the_examples_with_their_variable_unset_are_valid_but_not_runnable_here(monkeypatch, capsys):
    """Issue 58 item 5: with DBSWARM_PASSWORD unset the examples are not "invalid" (exit 2): each
    is exit 0 (no password) or 10 naming the variable."""
    from pathlib import Path
    monkeypatch.delenv("DBSWARM_PASSWORD", raising=False)
    paths = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))
    answers = {}
    for path in paths:
        answers[path.name] = main(["validate", "--offline", str(path)])
        err = capsys.readouterr().err
        if answers[path.name] == 10:
            assert "environment variable DBSWARM_PASSWORD is not set" in err, (path.name, err)
    assert set(answers.values()) <= {0, 10} and 10 in answers.values(), answers


def test_run_refuses_an_unset_env_reference_before_anything_starts(tmp_path, monkeypatch):
    from dbswarm.run.runtime.local import run_campaign
    monkeypatch.delenv("DBSWARM_T35_PASS", raising=False)
    text = ("name: envref\nmatrix:\n  target:\n    - {engine: sqlite}\n"
            "    - {engine: postgresql, url: \"postgresql://dbswarm@127.0.0.1:5/dbswarm\", "
            "password: {env: DBSWARM_T35_PASS}}\nworkload: {recordcount: 100, operationcount: 100}\n")
    with pytest.raises(NotRunnableHere) as err:
        run_campaign(text, str(tmp_path / "results"), show_progress=False, log=lambda *a: None)
    assert err.value.problems == ["matrix.target[1].password: environment variable DBSWARM_T35_PASS is not set"]
    assert not (tmp_path / "results").exists()   # nothing started, nothing written


def test_every_problem_at_once_with_the_nearest_valid_name():
    text = """\
name: "not a name!"
target: {engine: postgresql, url: "postgresql://h/db", password: hunter2, lable: x}
workload: {family: sysbench, test: oltp_nope, thread: 4, tabels: 2}
fanuot: {shards: 2}
"""
    with pytest.raises(CampaignError) as err:
        load_campaign(text)
    problems = err.value.problems
    assert problems[0].startswith("name: ")
    assert any(p.startswith("target.password: a literal password is not allowed") for p in problems)
    assert "target.lable: unknown key; did you mean `label`?" in problems
    assert "fanuot: unknown key; did you mean `fanout`?" in problems
    assert any(p.startswith("workload.test: ") for p in problems), problems
    assert "workload.thread: unknown key for a sysbench workload; did you mean `threads`?" in problems
    assert "workload.tabels: unknown key for a sysbench workload; did you mean `tables`?" in problems
    # nothing near: no suggestion
    with pytest.raises(CampaignError) as err:
        load_campaign("workload: {zzzzqqq: 1}\n")
    assert err.value.problems == ["workload.zzzzqqq: unknown key for a ycsb workload"]


def test_three_independent_errors_are_named_in_one_run(tmp_path, capsys):
    """Issue 58 item 5: a misspelt top-level key, a misspelt workload key and an unknown preset
    in one file: all three in one answer (the preset was named only once the key was fixed)."""
    spec = tmp_path / "c.yaml"
    spec.write_text("name: three\nfanuot: {shards: 2}\nworkload: {preset: S42, recordcont: 100}\n")
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "fanuot: unknown key; did you mean `fanout`?" in err
    assert "workload.recordcont: unknown key for a ycsb workload; did you mean `recordcount`?" in err
    assert "workload.preset: unknown preset 'S42'" in err, err


@pytest.mark.parametrize("workload,near", [
    ({"preset": "S42"}, "S4"), ({"preset": "95;5"}, None), ({"preset": "workloada"}, None),
    ({"family": "tpcc", "preset": "quik"}, "quick"), ({"family": "tpcc", "preset": "publishd"}, "published"),
    ({"family": "sysbench", "test": "oltp_read_writ"}, "oltp_read_write"),
])
def test_presets_get_did_you_mean_and_the_bad_value_back(workload, near):
    with pytest.raises(CampaignError) as err:
        load_campaign({"workload": workload})
    key = "preset" if "preset" in workload else "test"
    [problem] = err.value.problems
    assert problem.startswith(f"workload.{key}: ") and repr(workload[key]) in problem, problem
    assert (f"did you mean `{near}`?" in problem) if near else ("did you mean" not in problem), problem


@pytest.mark.parametrize("given,canonical", [("A", "a"), ("a", "a"), ("s4", "S4"), ("S4", "S4"), ("F", "f"),
                                             ("95:5", "95:5")])
def test_ycsb_preset_names_are_case_insensitive(given, canonical):
    _, runs = load_campaign({"workload": {"preset": given}})
    assert runs[0].workload.preset == canonical
    assert runs[0].workload.readproportion == load_campaign({"workload": {"preset": canonical}})[1][0].workload.readproportion


def test_tpcc_preset_names_are_case_insensitive():
    _, runs = load_campaign({"workload": {"family": "tpcc", "preset": "Quick"}})
    assert runs[0].workload.preset == "quick" and runs[0].workload.threads == 4


def test_a_run_that_failed_before_any_shard_says_so_once(monkeypatch):
    """The state machine failed in its plan or prepare step: one prefix, no pointer to shard
    files that do not exist."""
    from dbswarm.run.runtime.local import _Watch
    watch = _Watch("c-35", lambda *_: None, board=None)
    watch.plan = {"store": "/nonexistent-dbswarm-35", "campaign_id": "c-35"}

    class Store:
        def put_json(self, *a):
            pass

        def key(self, *parts):
            return "/".join(parts)

        def list(self, prefix):
            return []

        def location(self, key):
            return key
    import dbswarm.run.runtime.local as local
    monkeypatch.setattr(local, "open_store", lambda url: Store())
    cause = '{"errorType": "SecretError", "errorMessage": "SecretError: target.password: cannot read secret file"}'
    with pytest.raises(DbswarmError) as err:
        watch.outcome({"status": "FAILED", "error": "SecretError", "cause": cause}, {}, [])
    text = str(err.value)
    assert text == "campaign c-35: the state machine ended FAILED: target.password: cannot read secret file", text


def test_validates_cost_estimate_is_the_one_the_result_shows(tmp_path, capsys):
    """`dbswarm validate` and the plan step of `dbswarm run` (whose cost-estimate.json the
    result's Cloud usage table shows) estimate the same shards: the same worker calls, worker
    GB-s and price; the other requests are named in both."""
    import json
    import re
    from pathlib import Path

    from dbswarm.results.report.files import cost_lines
    from dbswarm.run.runtime.service import plan_campaign
    demo = str(Path(__file__).parents[2] / "examples" / "demo.yaml")
    assert main(["validate", demo]) == 0
    out = capsys.readouterr().out
    plan = plan_campaign({"campaign": open(demo).read(), "results": str(tmp_path)})
    est = json.loads((tmp_path / plan["campaign_id"] / "cost-estimate.json").read_text())
    lam = est["lambda"]
    assert f"about {est['price']['total']:,.4f} USD" in out, out
    assert f"Lambda {lam['gb_seconds']:,.1f} GB-s in {lam['requests']:,} requests" in out, out
    workers = re.search(r"of which the workers: ([\d,]+) calls, ([\d,.]+) s, ([\d,.]+) GB-s", out)
    assert workers and int(workers[1].replace(",", "")) == lam["worker_calls"], out
    # the result's table, from the plan step's estimate: the same figures, the same price
    table = "\n".join(cost_lines({"cost": {"estimate": est, "measured": {"worker_calls": 0, "worker_seconds": 0}}}))
    assert f"| estimate | {lam['worker_calls']:,} | {lam['worker_seconds']:,} | {workers[3]} |" in table, table
    assert f"{est['price']['total']:,.4f} USD" in table
    assert f"the {lam['requests'] - lam['worker_calls']:,} other Lambda requests" in table
