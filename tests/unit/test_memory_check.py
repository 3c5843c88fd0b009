"""Issue 57 item 7: validation estimates what a shard's client threads hold (a load batch, a
scan's rows) and refuses what cannot fit where the shard runs, naming the keys: in the cloud
the worker function's memory, locally this machine's available memory and a shard process's
address-space limit (ulimit -v). Before, such a campaign passed and its shard died with an
empty MemoryError."""
import resource
import subprocess
import sys

import pytest

from dbswarm.campaign.spec import load_campaign
from dbswarm.errors import CampaignError

BIG = {"fieldcount": 1000, "fieldlength": 65536, "batchsize": 100_000}   # 6.1 TB of values per batch


def test_a_batch_no_machine_holds_is_refused_naming_its_keys():
    with pytest.raises(CampaignError) as err:
        load_campaign({"workload": BIG})
    [problem] = err.value.problems
    assert problem.startswith("workload.fieldcount × workload.fieldlength × workload.batchsize: "), problem
    assert "available (MemAvailable" in problem or "cgroup" in problem, problem
    assert "lower fieldcount, fieldlength or batchsize" in problem


def test_a_scan_longer_than_memory_names_maxscanlength():
    with pytest.raises(CampaignError) as err:
        load_campaign({"workload": {"preset": "e", "fieldcount": 100, "fieldlength": 65536, "batchsize": 1,
                                    "maxscanlength": 100_000}})
    assert err.value.problems[0].startswith("workload.fieldcount × workload.fieldlength × workload.maxscanlength: ")


PG = {"engine": "postgresql", "url": "postgresql://u@127.0.0.1:1/db"}   # never connected to


def test_in_the_cloud_the_worker_functions_memory_decides(monkeypatch):
    """626 MB of values per batch: three times that (PostgreSQL's driver) is more than a
    1,769-MB function holds, not more than a 3,008-MB one; locally (this machine's memory) the
    same campaign is valid."""
    w = {"fieldcount": 100, "fieldlength": 65536, "batchsize": 100}
    load_campaign({"target": PG, "workload": w})
    monkeypatch.setenv("AWS_EXECUTION_ENV", "AWS_Lambda_python3.12")
    monkeypatch.setenv("DBSWARM_WORKER_MEMORY_MB", "1769")
    with pytest.raises(CampaignError) as err:
        load_campaign({"target": PG, "workload": w})
    assert "a worker function has 1,769 MB (template parameter WorkerMemorySize)" in err.value.problems[0]
    assert "workload.batchsize" in err.value.problems[0]
    monkeypatch.setenv("DBSWARM_WORKER_MEMORY_MB", "3008")
    load_campaign({"target": PG, "workload": w})
    # two threads in one function hold twice that: spread them over two
    with pytest.raises(CampaignError) as err:
        load_campaign({"target": PG, "workload": {**w, "threads": 2}, "fanout": {"shards": 1}})
    assert "2 client threads per shard" in err.value.problems[0] and "more shards" in err.value.problems[0]
    load_campaign({"target": PG, "workload": {**w, "threads": 2}, "fanout": {"shards": 2}})


def _limited(limit):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_validate_under_an_address_space_limit_refuses_what_would_die_of_memory_error(tmp_path):
    """The issue's case: a shard under a 3-GB limit. 2 threads x 626 MB of values on PostgreSQL
    (3.7 GB with the driver's copies; such a run died of MemoryError) is refused, exit 2, saying
    the limit; on SQLite (2.5 GB: such a run loaded) it is valid, and so is a batch of 63 MB."""
    spec = tmp_path / "c.yaml"
    w = "workload: {fieldcount: 100, fieldlength: 65536, batchsize: 100, threads: 2}\nfanout: {shards: 1}\n"
    spec.write_text(f"target: {{engine: postgresql, url: '{PG['url']}'}}\n" + w)
    proc = subprocess.run([sys.executable, "-m", "dbswarm", "validate", str(spec)], capture_output=True, text=True,
                          timeout=120, preexec_fn=_limited(3 * 1024 ** 3))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "workload.fieldcount × workload.fieldlength × workload.batchsize" in proc.stderr
    assert "a shard process may map 3.0 GB (ulimit -v)" in proc.stderr, proc.stderr
    for text in (w, f"target: {{engine: postgresql, url: '{PG['url']}'}}\n" + w.replace("batchsize: 100", "batchsize: 10")):
        spec.write_text(text)
        proc = subprocess.run([sys.executable, "-m", "dbswarm", "validate", str(spec)], capture_output=True, text=True,
                              timeout=120, preexec_fn=_limited(3 * 1024 ** 3))
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ordinary_workloads_are_far_from_any_limit():
    from dbswarm.families import base as families
    fam = families.get("ycsb")
    per_thread, _ = fam.thread_memory(fam.workload({}))
    assert per_thread < 2 * 1024 ** 2        # 100 records of 10 x 100 bytes: about 1 MB
