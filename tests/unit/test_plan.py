"""Plan invariants, property-tested: load ranges cover [insertstart, insertstart+count) exactly,
without overlap; threads, operations and target rate are preserved; seeds differ. The client
model the plan resolves (fanout.client_model auto)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbswarm.campaign.plan import derive_seed, make_plan, plan_run, split
from dbswarm.campaign.spec import load_campaign


@given(st.integers(0, 10 ** 9), st.integers(1, 2000))
def test_split_preserves_sum_and_balance(total, parts):
    out = split(total, parts)
    assert sum(out) == total and len(out) == parts and max(out) - min(out) <= 1


@settings(max_examples=150, deadline=None)
@given(records=st.integers(1, 200_000), ops=st.integers(0, 10 ** 6), threads=st.integers(1, 400),
       shards=st.integers(1, 64), insertstart=st.integers(0, 1000), rate=st.none() | st.floats(1, 1e6))
def test_ycsb_plan_invariants(records, ops, threads, shards, insertstart, rate):
    wl = {"recordcount": records + insertstart, "insertstart": insertstart, "operationcount": ops,
          "threads": threads}
    if ops == 0:
        wl["maxexecutiontime"] = 10
    if rate:
        wl["target"] = rate
    campaign, runs = load_campaign({"workload": wl, "fanout": {"shards": shards}})
    plan = plan_run(campaign, runs[0])
    assert len(plan) == min(shards, threads)
    assert sum(s.threads for s in plan) == threads and all(s.threads >= 1 for s in plan)
    assert sum(s.operationcount for s in plan) == ops
    covered = []
    for s in plan:
        assert sum(c for _, c in s.thread_load) == s.load_count
        for start, count in s.thread_load:
            covered.extend(range(start, start + count))
    assert covered == list(range(insertstart, insertstart + records))  # exact cover, no overlap, in order
    offsets = [s.thread_offset for s in plan]
    assert offsets == sorted(offsets) and offsets[0] == 0
    if rate:
        assert abs(sum(s.target for s in plan) - rate) < 1e-6 * rate
    assert len({s.seed for s in plan}) == len(plan)


@settings(max_examples=50, deadline=None)
@given(tables=st.integers(1, 16), size=st.integers(100, 5000), threads=st.integers(1, 64), per=st.integers(1, 16))
def test_sysbench_plan_covers_every_row(tables, size, threads, per):
    campaign, runs = load_campaign({"workload": {"family": "sysbench", "tables": tables, "table_size": size,
                                                 "threads": threads}, "fanout": {"threads_per_shard": per}})
    plan = plan_run(campaign, runs[0])
    assert sum(s.load_count for s in plan) == tables * size
    assert all(s.threads <= per for s in plan)
    starts = [s.load_start for s in plan]
    assert starts == sorted(starts)


def test_seeds_derive_from_campaign_seed():
    assert derive_seed(1, 0, 0) == derive_seed(1, 0, 0)
    assert derive_seed(1, 0, 0) != derive_seed(2, 0, 0) != derive_seed(1, 0, 1)


def test_default_shards_is_cpu_count_capped_by_threads():
    campaign, runs = load_campaign({"workload": {"threads": 3}})
    assert len(plan_run(campaign, runs[0], cpu_count=8)) == 3
    assert len(plan_run(campaign, runs[0], cpu_count=2)) == 2


def test_default_shards_follow_the_cpu_affinity():
    # under taskset (or a container's cpuset) the process may use fewer CPUs than the machine
    # has: one shard per usable CPU, not per CPU of the machine
    import os
    import subprocess
    import sys
    code = ("from dbswarm.campaign.plan import plan_run; from dbswarm.campaign.spec import load_campaign; "
            "c, r = load_campaign({'workload': {'threads': 64}}); print(len(plan_run(c, r[0])))")
    pinned = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            preexec_fn=lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}))
    assert pinned.stdout.strip() == "1"
    free = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert free.stdout.strip() == str(min(64, len(os.sched_getaffinity(0))))


def test_plan_document_has_no_secret_values():
    campaign, runs = load_campaign({"target": {"engine": "postgresql", "url": "postgresql://u@h/db",
                                               "password": {"env": "PGPASS"}}})
    doc = make_plan(campaign, runs, "c-1").to_dict()
    assert doc["runs"][0]["target"]["password"] == {"env": "PGPASS"}
    assert doc["schema_version"] == 1


# ---- fanout.client_model: auto -----------------------------------------------------------------

def _model_plan(url, threads, shards, **fanout):
    campaign, runs = load_campaign({"target": {"engine": "postgresql", "url": url},
                                    "workload": {"preset": "a", "threads": threads},
                                    "fanout": {"shards": shards, **fanout}})
    return make_plan(campaign, runs, "model-1", cpu_count=2, sqlite_url="x.db").runs[0]


@pytest.mark.parametrize(("url", "threads", "shards", "model"), [
    ("postgresql://u@127.0.0.1:5432/db", 128, 2, "multiplexed"),      # 64 a shard, the server here
    ("postgresql://u@localhost/db", 512, 1, "multiplexed"),
    ("postgresql://u@[::1]:5432/db", 64, 1, "multiplexed"),
    ("postgresql://u@/db?host=/var/run/postgresql", 128, 1, "multiplexed"),  # a unix socket
    ("postgresql://u@127.0.0.1/db", 127, 2, "threads"),                # 63 and 64: not every shard
    ("postgresql://u@127.0.0.1/db", 16, 2, "threads"),
    ("postgresql://u@db.internal/db", 128, 1, "threads"),              # not resolved: another machine
    ("postgresql://u@10.0.0.5/db", 256, 2, "threads"),
    ("postgresql://u@127.0.0.1,10.0.0.5/db", 128, 1, "threads"),      # one host elsewhere
])
def test_client_model_auto_multiplexes_many_connections_to_a_server_on_this_machine(url, threads, shards, model):
    plan = _model_plan(url, threads, shards)
    assert plan.client_model == model


def test_client_model_named_is_kept_and_auto_is_the_default():
    from dbswarm.campaign.spec import Fanout
    assert Fanout().client_model == "auto"
    assert _model_plan("postgresql://u@127.0.0.1/db", 128, 1, client_model="threads").client_model == "threads"
    assert _model_plan("postgresql://u@db.internal/db", 8, 1, client_model="multiplexed").client_model == "multiplexed"
    from dbswarm.campaign.fanout_auto import client_model_for
    assert client_model_for("auto", {"engine": "noop"}, 512, 1) == "threads"  # no server to share CPUs with
    assert client_model_for("auto", {"engine": "sqlite", "url": "x.db"}, 512, 1) == "threads"
