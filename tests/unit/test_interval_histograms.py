"""Per-interval latency histograms (issue 17): merged exactly across shards — the merge of
every shard's per-interval histograms is the histogram of all samples per interval — and
their percentiles within the buckets' stated precision of the exact ones."""
from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from dbswarm.measure.recorder import (
    PERCENTILES,
    Measurement,
    Recorder,
    Timeline,
    _pname,
    interval_bucket,
    interval_bucket_value,
    interval_percentiles,
)

S0 = 1_800_000_000  # an epoch second, the same anchor for every recorder of a test
NS = 1_000_000_000


def _recorder(interval_s):
    rec = Recorder(interval_s)
    rec.second0 = rec.m.timeline.start = S0
    rec.base = 0  # perf time 0 is second S0's start
    return rec


def _record(rec, samples):
    for second, lat_us, op in sorted(samples):  # one thread: time goes forward
        t1 = second * NS + 500_000_000
        rec.ok(op, t1 - lat_us * 1000, t1)
    return rec.measurement()


samples_strategy = st.lists(
    st.tuples(st.integers(0, 40), st.integers(0, 5_000_000), st.sampled_from(["READ", "UPDATE"]),
              st.integers(0, 3)),
    min_size=1, max_size=400)


@settings(max_examples=60, deadline=None)
@given(samples=samples_strategy, interval_s=st.sampled_from([1, 3, 10]))
def test_merged_shard_histograms_equal_one_histogram_of_all_samples(samples, interval_s):
    shards = [Measurement() for _ in range(4)]
    for shard in range(4):
        mine = [(sec, lat, op) for sec, lat, op, s in samples if s == shard]
        shards[shard] = _record(_recorder(interval_s), mine) if mine else Measurement()
    merged = Measurement()
    for m in random.Random(len(samples)).sample(shards, 4):  # any order
        merged.merge(Measurement.from_dict(m.to_dict()))     # through the shard file's encoding
    expected: dict = {}
    for sec, lat, op, _ in samples:
        buckets = expected.setdefault(op, {}).setdefault((S0 + sec) // interval_s, {})
        b = interval_bucket(lat)
        buckets[b] = buckets.get(b, 0) + 1
    assert merged.timeline.sparse_hist() == expected
    assert merged.timeline.interval_s == interval_s
    summary = merged.timeline.interval_summary()
    counts = summary["all"]["count"]
    assert sum(c for c in counts if c) == len(samples)
    first = summary["start"] // interval_s
    for op, intervals in expected.items():
        for iv, buckets in intervals.items():
            got = {k: v[iv - first] for k, v in summary["by_operation"][op].items()}
            assert got == interval_percentiles(buckets)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(0, 3_600_000_000), min_size=1, max_size=300))
def test_interval_percentiles_are_within_the_bucket_precision(values):
    buckets: dict = {}
    for v in values:
        b = interval_bucket(v)
        assert interval_bucket_value(b) >= v and (v < 64 or interval_bucket_value(b) <= v * (1 + 1 / 32))
        buckets[b] = buckets.get(b, 0) + 1
    got = interval_percentiles(buckets)
    ordered = sorted(values)
    for p in PERCENTILES:
        exact = ordered[max(1, math.ceil(len(values) * p / 100)) - 1]
        assert exact <= got[_pname(p)] <= (exact if exact < 64 else exact * (1 + 1 / 32)), p
    assert got["max_us"] >= ordered[-1] and got["count"] == len(values)


def test_buckets_are_ordered_like_their_values():
    previous = -1
    for v in list(range(0, 5000)) + [10 ** k + d for k in range(4, 10) for d in (-1, 0, 1)]:
        b = interval_bucket(v)
        assert b >= previous
        previous = b


def test_timelines_of_different_intervals_refuse_to_merge():
    a, b = _record(_recorder(1), [(0, 100, "READ")]), _record(_recorder(5), [(0, 100, "READ")])
    try:
        a.timeline.merge(b.timeline)
    except ValueError as exc:
        assert "intervals do not merge" in str(exc)
    else:
        raise AssertionError("merged 1 s and 5 s intervals")


def test_an_empty_timeline_has_no_intervals():
    assert Timeline().interval_summary() is None
