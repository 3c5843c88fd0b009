"""Mergeable measurements: merging equals measuring everything in one place, in any order."""
import copy
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from dbswarm.measure.recorder import Measurement, OperationStats, Recorder, Timeline, new_histogram

NS = 1_000_000_000

latencies = st.lists(st.integers(1, 50_000_000), min_size=1, max_size=400)


@settings(max_examples=60, deadline=None)
@given(st.lists(latencies, min_size=1, max_size=8), st.randoms())
def test_histogram_merge_equals_single_histogram(parts, rnd):
    single = new_histogram()
    shards = []
    for part in parts:
        h = new_histogram()
        for v in part:
            h.record_value(v)
            single.record_value(v)
        shards.append(h)
    rnd.shuffle(shards)
    merged = new_histogram()
    for h in shards:
        merged.add(h)
    for p in (50, 90, 95, 99, 99.9, 100):
        assert merged.get_value_at_percentile(p) == single.get_value_at_percentile(p)
    assert merged.get_total_count() == single.get_total_count()
    assert merged.get_mean_value() == single.get_mean_value()


def _measurement(seed):
    rng = random.Random(seed)
    m = Measurement()
    for op in rng.sample(["READ", "UPDATE", "INSERT"], 2):
        s = m.op(op)
        for _ in range(rng.randint(1, 50)):
            s.histogram.record_value(rng.randint(1, 10 ** 6))
            s.count += 1
        s.errors = rng.randint(0, 3)
    m.errors = {"READ:connection:lost": rng.randint(0, 4)}
    m.counters = {"reconnects": rng.randint(0, 2)}
    m.timeline = Timeline(1_700_000_000 + rng.randint(0, 5))
    m.timeline.ops = {"READ": [rng.randint(0, 9) for _ in range(rng.randint(1, 6))]}
    m.timeline.errors = [rng.randint(0, 2) for _ in range(rng.randint(0, 4))]
    if rng.random() < 0.7:  # records: groups of 3 integers (as TPC-C's New-Orders), merged by concatenation
        m.records = {"orders": [rng.randint(1, 5000) for _ in range(3 * rng.randint(0, 5))]}
    return m


def _canon(m: Measurement):
    d = m.to_dict()
    for op in d["operations"].values():
        op["histogram"] = None
    tl = d["timeline"]
    start = tl["start"]
    tl["ops"] = {k: {start + i: v for i, v in enumerate(seq) if v} for k, seq in tl["ops"].items()}
    tl["errors"] = {start + i: v for i, v in enumerate(tl["errors"]) if v}
    tl["latency_us"] = {start + i: v for i, v in enumerate(tl["latency_us"]) if v}
    del tl["start"]
    # records: the same groups of values, in whatever order the parts were merged
    d["records"] = {k: sorted(zip(v[0::3], v[1::3], v[2::3])) for k, v in d.get("records", {}).items()}
    return d, {k: [s.histogram.get_value_at_percentile(p) for p in (50, 99)] for k, s in m.operations.items()}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10 ** 6), min_size=2, max_size=7), st.randoms())
def test_measurement_merge_is_order_independent(seeds, rnd):
    ms = [_measurement(s) for s in seeds]
    a = Measurement()
    for m in ms:
        a.merge(Measurement.from_dict(m.to_dict()))
    order = list(ms)
    rnd.shuffle(order)
    b = Measurement()
    # tree-shaped merge in another order
    halves = [Measurement(), Measurement()]
    for i, m in enumerate(order):
        halves[i % 2].merge(Measurement.from_dict(m.to_dict()))
    b.merge(halves[1]).merge(halves[0])
    assert _canon(a) == _canon(b)
    assert a.total_ops == sum(m.total_ops for m in ms)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.one_of(st.integers(0, 3000), st.integers(0, 2 * 3_600_000_000)), st.integers(1, 50),
                       min_size=65, max_size=500))  # many distinct values, several per bucket
def test_latencies_added_up_by_bucket_make_the_histogram_one_value_at_a_time_makes(seen):
    """Recorder._record_latencies adds up the latencies of one histogram bucket before
    recording them (one Python call per bucket, not per distinct latency): counts, percentiles,
    mean, minimum, maximum and the encoding are those of recording every latency by itself
    (0 and values past the histogram's hour clamped as before)."""
    from dbswarm.measure.recorder import HIST_HIGHEST_US
    stats = OperationStats()
    Recorder._record_latencies(dict(seen), stats)
    one_by_one = new_histogram()
    for lat, count in seen.items():
        one_by_one.record_value(min(max(lat, 1), HIST_HIGHEST_US), count)
    h = stats.histogram
    assert h.get_total_count() == one_by_one.get_total_count() == sum(seen.values())
    assert (h.get_min_value(), h.get_max_value(), h.get_mean_value()) == \
        (one_by_one.get_min_value(), one_by_one.get_max_value(), one_by_one.get_mean_value())
    assert [h.get_value_at_percentile(p) for p in (1, 50, 90, 99, 99.9, 100)] == \
        [one_by_one.get_value_at_percentile(p) for p in (1, 50, 90, 99, 99.9, 100)]
    assert h.encode() == one_by_one.encode()
    assert stats.summary() == OperationStats.from_dict(stats.to_dict()).summary()


def test_round_trip_keeps_everything():
    m = _measurement(3)
    again = Measurement.from_dict(m.to_dict())
    assert _canon(again) == _canon(m)


def test_records_merge_by_concatenation_round_trip_and_old_documents_load_without():
    """Measurement.records: lists of integers merged by concatenation (a record written by one
    thread stays whole: groups of k values keep every list a multiple of k long), serialized
    only when there are some; a document of a dbswarm that kept none loads with none."""
    a, b = Measurement(), Measurement()
    a.records = {"orders": [1, 2, 3001], "bands": [10, 20, 1, 0]}
    b.records = {"orders": [2, 5, 3100, 1, 2, 3002]}
    m = Measurement().merge(Measurement.from_dict(a.to_dict())).merge(Measurement.from_dict(b.to_dict()))
    assert m.records == {"orders": [1, 2, 3001, 2, 5, 3100, 1, 2, 3002], "bands": [10, 20, 1, 0]}
    assert a.records["orders"] == [1, 2, 3001]  # the parts are not changed by merging them
    assert Measurement.from_dict(m.to_dict()).records == m.records
    assert "records" not in Measurement().to_dict()
    old = Measurement().to_dict()
    assert Measurement.from_dict(old).records == {}
    rec = Recorder()
    lst = rec.record_list("orders")
    lst.extend((1, 1, 3001))
    assert rec.record_list("orders") is lst and rec.measurement().records == {"orders": [1, 1, 3001]}


def test_timeline_sums_on_the_wall_clock_second():
    a, b = Timeline(100), Timeline(102)
    a.ops = {"READ": [1, 2, 3]}
    b.ops = {"READ": [10, 20], "UPDATE": [5]}
    a.merge(b)
    assert a.start == 100 and a.ops["READ"] == [1, 2, 13, 20] and a.ops["UPDATE"] == [0, 0, 5]
    assert a.totals() == [1, 2, 18, 20]


def test_a_merge_adds_into_its_own_lists_and_leaves_the_other_alone():
    """Timeline.merge adds a shorter timeline into the receiver's lists in place (a snapshot
    adds each thread's few seconds to the run so far), grows them at either end when the other
    reaches further, and never changes the other's lists."""
    run, part = Timeline(100), Timeline(103)
    run.ops, run.errors, run.latency_us = {"READ": [1, 2, 3, 4, 5]}, [0, 1], [10, 20, 30, 40, 50]
    part.ops, part.errors, part.latency_us = {"READ": [7, 0, 1]}, [2], [70, 0, 10]
    reads = run.ops["READ"]
    run.merge(part)
    assert run.ops["READ"] is reads and reads == [1, 2, 3, 11, 5, 1]
    assert run.errors == [0, 1, 0, 2] and run.latency_us == [10, 20, 30, 110, 50, 10]
    assert part.ops == {"READ": [7, 0, 1]} and part.errors == [2] and part.latency_us == [70, 0, 10]
    early = Timeline(98)
    early.ops = {"UPDATE": [4]}
    run.merge(early)
    assert run.start == 98 and run.ops["READ"] == [0, 0, 1, 2, 3, 11, 5, 1] and run.ops["UPDATE"] == [4]
    assert run.errors == [0, 0, 0, 1, 0, 2] and early.ops == {"UPDATE": [4]}


def test_a_part_handed_over_late_in_a_run_holds_only_its_own_seconds():
    """After Recorder.detach the recorder's timeline starts at the last second it recorded, not
    at the run's first: a part handed over an hour in is a few seconds long (a snapshot's merge
    costs the part's length, not the run's). An error or an operation that ends in a second
    before that start (recorded after the hand-over) grows the timeline at its front; the
    parts still merge to what one recorder fed the same measures."""
    whole, rec = Recorder(1), Recorder(1)
    rec.second0, rec.base = whole.second0, whole.base
    rec.m.timeline.start = whole.second0
    parts = []

    def both(fn, *args):
        fn(whole, *args)
        fn(rec, *args)
    hour = 3600 * NS
    for i in range(3):  # 20 s of reads, an hour apart, each handed over
        for j in range(200):
            t1 = whole.base + i * hour + j * NS // 10 + 1000
            both(lambda r, t: r.ok("READ", t - 500_000, t), t1)
        parts.append(rec.detach())
    for p in parts[1:]:
        assert len(p.m.timeline.ops["READ"]) <= 21 and len(p.m.timeline.latency_us) <= 21
    # after the last hand-over: an error anchors the timeline at its second; an error and an
    # operation of 30 s before it, recorded after it, grow the timeline at its front
    late = whole.base + 2 * hour + 5 * NS
    both(lambda r: r.error("READ", "timeout", "x", late + 30 * NS))
    assert rec.m.timeline.start == rec.second0 + 2 * 3600 + 35
    both(lambda r: r.ok("UPDATE", late - 1000, late))
    both(lambda r: r.ok("UPDATE", late + 31 * NS, late + 31 * NS + 2000))  # rolls the second before
    assert rec.m.timeline.start == rec.second0 + 2 * 3600 + 5
    both(lambda r: r.error("UPDATE", "timeout", "x", late))
    assert rec.m.timeline.errors == [1] + [0] * 29 + [1] and rec.m.timeline.ops["UPDATE"] == [1]
    merged = Recorder.merged([*parts, rec])
    assert merged.to_dict() == whole.measurement().to_dict()
    assert merged.timeline.errors[2 * 3600 + 5] == 1 and merged.timeline.ops["UPDATE"][2 * 3600 + 5] == 1


def test_recorder_counts_and_timeline():
    rec = Recorder()
    t = rec.base + 2_500_000_000  # 2.5 s after the recorder's first wall-clock second
    rec.ok("READ", t - 150_000, t)
    rec.ok("INSERT", t - 2_000_000, t, n=100)
    rec.error("READ", "connection", "lost", t)
    m = rec.measurement()
    assert m.operations["READ"].count == 1 and m.operations["INSERT"].count == 100
    assert m.operations["INSERT"].histogram.get_total_count() == 1  # one call, 100 rows
    assert m.timeline.ops["READ"][2] == 1 and m.timeline.errors[2] == 1
    assert m.errors == {"READ:connection:lost": 1}
    s = OperationStats.from_dict(m.operations["READ"].to_dict()).summary()
    assert 149 <= s["p50_us"] <= 151


def test_paced_operations_keep_the_response_time_from_the_intended_start_and_merge_it_exactly():
    from dbswarm.measure.recorder import Measurement, Recorder
    recs = [Recorder(), Recorder()]
    base = recs[0].base
    for k, rec in enumerate(recs):
        for i in range(100):
            rec.intended_ns = base + i * 1_000_000            # on a 1 ms schedule
            t0 = rec.intended_ns + (500_000 if i == 50 else 0)  # one step started 0.5 ms late
            rec.ok_paced("READ", t0, t0 + 100_000 * (k + 1))  # 100 / 200 µs of service
    merged = Measurement()
    for rec in reversed(recs):
        merged.merge(Measurement.from_dict(rec.measurement().to_dict()))  # through the wire format
    s = merged.operations["READ"].summary()
    assert s["calls"] == 200 and s["intended"]["calls"] == 200
    assert s["max_us"] == 200 and s["intended"]["max_us"] >= 700   # 0.5 ms late + 200 µs
    assert s["p90_us"] == s["intended"]["p90_us"] == 200              # on time: the same figures
    unpaced = Recorder()
    unpaced.ok("READ", 0, 100_000)
    assert "intended" not in unpaced.measurement().operations["READ"].summary()
    assert "intended_histogram" not in unpaced.measurement().operations["READ"].to_dict()


def test_a_schedule_running_late_is_recorded_at_the_histograms_resolution_without_changing_it():
    """ok_paced keys response times by their HdrHistogram bucket (a wait that grows at every
    step makes each value distinct): the histogram is the same as recording every value."""
    from dbswarm.measure.recorder import Recorder
    rec = Recorder()
    exact = new_histogram()
    rnd = random.Random(4)
    rec.intended_ns = rec.base
    for i in range(20_000):
        t1 = rec.base + 1_000 * (i * 37 + rnd.randint(0, 5_000_000))  # late by up to ~5.7 s, growing
        rec.ok_paced("READ", t1 - 100_000, t1)
        exact.record_value((t1 - rec.intended_ns) // 1000)
    got = rec.measurement().operations["READ"].intended
    assert got.get_total_count() == exact.get_total_count() == 20_000
    for p in (0, 10, 50, 90, 99, 99.9, 100):
        assert got.get_value_at_percentile(p) == exact.get_value_at_percentile(p)
    assert got.get_mean_value() == exact.get_mean_value()


def test_warm_up_operations_are_kept_apart_from_the_measured_ones():
    from dbswarm.measure.recorder import Measurement, Recorder
    rec = Recorder()
    rec.warm_until_ns = rec.base + 500_000_000          # the first half second is the warm-up
    for i in range(1000):
        t1 = rec.base + i * 1_000_000                    # one operation per ms over 1 s
        slow = t1 < rec.warm_until_ns                    # cold caches: 10 ms, then 100 µs
        rec.ok("READ", t1 - (10_000_000 if slow else 100_000), t1)
    m = Measurement.from_dict(rec.measurement().to_dict())
    merged = Measurement().merge(m).merge(m)             # merges exactly, warm-up included
    read, warm = merged.operations["READ"], merged.warmup["READ"]
    assert read.count == 1000 and warm.count == 1000 and merged.total_ops + merged.warmup_ops == 2000
    assert read.summary()["p99_us"] == 100 and read.summary()["max_us"] == 100   # the warm-up is out
    assert warm.summary()["p50_us"] >= 9_990
    assert sum(merged.timeline.ops["READ"]) == 2000                               # the timeline has all


def test_the_error_rate_counts_warm_up_calls_as_it_counts_warm_up_errors():
    """Errors are not kept apart for the warm-up, so the calls they are a rate of must not be
    either: 3 errors in 503 calls (400 of them in the warm-up) is 0.6 %, under the 1 % default,
    not 3 of 103 (2.9 %, a phase wrongly judged complete_with_errors)."""
    from dbswarm.results.aggregate import _judge_errors
    rec = Recorder()
    rec.warm_until_ns = rec.base + 500_000_000
    for i in range(500):
        t1 = rec.base + (i * 1_000_000 if i < 400 else 600_000_000 + i * 1_000)
        rec.ok("UPDATE", t1 - 100_000, t1)
    for _ in range(3):
        rec.error("UPDATE", "other", "deadlock", rec.base + 1_000)  # during the warm-up
    m = Measurement.from_dict(rec.measurement().to_dict())
    assert m.warmup_ops == 400 and m.total_ops == 100
    out = {"status": "complete"}
    _judge_errors(out, m, "run", 0.01)
    assert out["status"] == "complete" and out["error_rate"] == round(3 / 503, 6), out
    out = {"status": "complete"}
    _judge_errors(out, m, "run", 0.005)  # over a lower threshold: the operation's line has the same basis
    assert out["status"] == "complete_with_errors", out
    assert out["error_problems"][0].startswith("UPDATE: 3 of 503 calls"), out


def _paced_thread(rec, stall_at: int, stall_ms: int, steps: int = 3000):
    """One thread on a 1 ms schedule whose call ``stall_at`` is blocked for ``stall_ms``; the
    steps due meanwhile start late and catch up. -> [(end ns, response µs from the intended start)]"""
    out, now = [], 0
    for i in range(steps):
        due = i * 1_000_000
        start = max(due, now)
        now = start + (stall_ms * 1_000_000 if i == stall_at else 50_000)
        rec.intended_ns = due
        rec.ok_paced("READ", start, now)
        out.append((now, (now - due) // 1000))
    return out


def test_per_interval_response_times_from_the_intended_start_show_a_stall_and_merge_exactly():
    from dbswarm.measure.recorder import interval_bucket
    s0, recs, samples = 1_800_000_000, [Recorder(), Recorder()], []
    for rec, (stall_at, stall_ms) in zip(recs, ((1200, 500), (400, 300))):
        rec.second0 = rec.m.timeline.start = s0
        rec.base = 0
        samples += _paced_thread(rec, stall_at, stall_ms)
    merged = Measurement()
    for rec in reversed(recs):
        merged.merge(Measurement.from_dict(rec.measurement().to_dict()))  # through the shard file's encoding
    expected: dict = {}
    for end, lat in samples:
        buckets = expected.setdefault(s0 + end // 1_000_000_000, {})
        buckets[interval_bucket(lat)] = buckets.get(interval_bucket(lat), 0) + 1
    assert merged.timeline.sparse_hist(intended=True) == {"READ": expected}
    iv = merged.timeline.interval_summary()
    service, intended = iv["all"], iv["intended"]["all"]
    assert intended["count"] == service["count"] and sum(intended["count"]) == 6000
    # second 1 holds the 500 ms stall's backlog (second 0 the 300 ms one): the service time's
    # p99 stays at the calls' 50 µs, the response time's p99 is the stall's
    assert service["p99_us"][1] <= 51 and intended["p99_us"][1] >= 450_000, intended
    assert service["p99_us"][0] <= 51 and intended["p99_us"][0] >= 250_000, intended
    assert intended["p99_us"][2] <= 51  # caught up: on schedule again
    assert iv["intended"]["by_operation"]["READ"] == intended
    unpaced = Recorder()
    unpaced.ok("READ", 0, 100_000)
    m = unpaced.measurement()
    assert "intended" not in m.timeline.interval_summary() and "intended_hist" not in m.timeline.to_dict()


def test_a_lane_records_what_ok_records():
    """Recorder.lane (the YCSB hot path's own way in): an operation appended to the lane while
    perf time is before ``lane.until``, else ``ok``; across second boundaries, the warm-up's
    end, batches counted as n and a flush in between, the measurement is ok()'s exactly."""
    rnd = random.Random(5)

    def feed(use_lane):
        rec = Recorder(2)
        # one anchor for both recorders: each takes the wall-clock second it was made in, and the
        # two can be made either side of a second's edge (a loaded machine's CI run did so once)
        rec.second0 = rec.m.timeline.start = 1_800_000_000
        rec.base = 0
        base = rec.base + 10 * NS
        rec.warm_until_ns = base + int(1.5 * NS)
        lane = rec.lane("READ")
        t = base
        for i in range(6000):
            t0 = t + rnd.randrange(1000, 3000)
            t1 = t0 + rnd.choice((rnd.randrange(50_000, 900_000), rnd.randrange(1000, 5_000_000)))
            t = t1
            if i % 997 == 0:
                rec.ok("INSERT", t0, t1, 50)  # a batch: 50 units, one latency
            if i == 3000:
                rec.flush()
            if use_lane and t1 < lane.until:
                lane.lats.append((t1 - t0) // 1000)
            else:
                rec.ok("READ", t0, t1)
        return rec.measurement().to_dict()

    state = rnd.getstate()
    via_ok = feed(False)
    rnd.setstate(state)
    via_lane = feed(True)
    assert via_lane == via_ok
    m = Measurement.from_dict(via_lane)
    assert m.operations["READ"].count + m.warmup["READ"].count == 6000
    assert m.operations["INSERT"].count + m.warmup["INSERT"].count == 50 * 7
    assert m.warmup["READ"].count > 0 and len([v for v in m.timeline.ops["READ"] if v]) > 5


def test_merged_recorders_equal_their_measurements_merged():
    """Recorder.merged (a shard's threads, latencies added before any histogram sees them)
    gives what merging each recorder's measurement() gives: every count, histogram, interval,
    timeline second, warm-up and paced (intended) latency, with a recorder that flushed in
    the middle (more distinct latencies than MAX_DISTINCT_LATENCIES) among them."""
    import copy
    rnd = random.Random(9)
    recs = []
    for k in range(4):
        rec = Recorder(2)
        base = rec.base + 10 * NS
        rec.warm_until_ns = base + int(1.2 * NS)
        t = base
        for i in range(3000 + 2500 * (k == 1)):
            t0 = t + rnd.randrange(1000, 3000)
            t1 = t0 + rnd.choice((rnd.randrange(50_000, 900_000), rnd.randrange(1000, 50_000_000)))
            t = t1
            if k == 2:  # paced: also the response time from the intended start
                rec.intended_ns = t0 - rnd.randrange(0, 2_000_000)
                rec.ok_paced("UPDATE", t0, t1)
            else:
                rec.ok("READ" if i % 3 else "UPDATE", t0, t1)
        rec.count("reconnects", k)
        rec.error("READ", "connection", "lost", t)
        recs.append(rec)
    one_by_one = Measurement()
    for rec in copy.deepcopy(recs):
        one_by_one.merge(rec.measurement())
    merged = Recorder.merged(recs)
    assert merged.to_dict() == one_by_one.to_dict()
    assert merged.operations["UPDATE"].intended.get_total_count() > 0 and merged.warmup["READ"].count > 0
    assert sum(s.count for s in (*merged.operations.values(), *merged.warmup.values())) == 3 * 3000 + 5500


def test_a_snapshot_copy_is_the_recorder_as_of_now_and_leaves_it_going():
    """Recorder.snapshot_copy: the copy's measurement is the recorder's at that instant, its
    histograms included once they hold values (a flush past MAX_DISTINCT_LATENCIES); what the
    recorder records afterwards is in it alone."""
    rnd = random.Random(3)
    rec = Recorder(1)
    t = rec.base + 10 * NS
    lane = rec.lane("READ")

    def feed(n):
        nonlocal t
        for _ in range(n):
            t0 = t + 1000
            t1 = t0 + rnd.randrange(1000, 40_000_000)
            t = t1
            if t1 < lane.until:
                lane.lats.append((t1 - t0) // 1000)
            else:
                rec.ok("READ", t0, t1)
    feed(6000)
    assert rec.m.operations["READ"].histogram.get_total_count() > 0  # flushed in the middle
    copied = rec.snapshot_copy()
    before = copy.deepcopy(rec).measurement().to_dict()
    feed(500)
    assert copied.measurement().to_dict() == before
    assert rec.measurement().operations["READ"].count == 6500


def test_a_detached_part_and_what_follows_merge_to_the_whole_recording():
    """Recorder.detach: the part handed over holds everything recorded until then (the current
    second, pending latencies, the warm-up's operations, errors, counters) and the recorder goes
    on from nothing through the same lanes, Measurement object and records lists; the parts
    and the recorder's end merge to what one recorder fed the same operations measures."""
    def feeder(rec, rnd):
        t = rec.base + 10 * NS
        lane = rec.lane("READ")
        op_stats = rec.m.op  # a loop holds the Measurement's bound method (engine.loop)
        band = rec.record_list("bands")

        def feed(n):
            nonlocal t
            for i in range(n):
                t0 = t + 1000
                t1 = t0 + rnd.randrange(1000, 40_000_000)
                t = t1
                if t1 < lane.until:
                    lane.lats.append((t1 - t0) // 1000)
                else:
                    rec.ok("READ", t0, t1)
                if i % 7 == 0:
                    rec.ok("UPDATE", t0, t1 + 5000)
                if i % 11 == 0:
                    op_stats("READ").not_found += 1
                if i % 97 == 0:
                    rec.error("UPDATE", "conflict", "deadlock", t1)
                    rec.count("retries")
                if i % 500 == 0:
                    band.append(i)
        return feed

    whole = Recorder(1)
    whole.warm_until_ns = whole.base + 12 * NS
    feed_whole = feeder(whole, random.Random(5))
    rec = copy.deepcopy(whole)
    feed = feeder(rec, random.Random(5))
    parts, as_detached = [], []
    for n in (700, 3000, 1, 0, 5200, 900):
        feed_whole(n)
        feed(n)
        parts.append(rec.detach())
        as_detached.append(copy.deepcopy(parts[-1]).measurement().to_dict())
        assert rec.m.total_ops == 0 and not rec.m.errors and not rec.m.counters
        # the parts so far are the whole recording so far (a snapshot's exactness)
        so_far = Recorder.merged(copy.deepcopy(parts)).operations
        assert {k: v.count for k, v in so_far.items()} == \
            {k: v.count for k, v in copy.deepcopy(whole).measurement().operations.items()}
    feed_whole(300)
    feed(300)
    # nothing recorded after a detach went into the part handed over
    assert [copy.deepcopy(p).measurement().to_dict() for p in parts] == as_detached
    assert sum(p.measurement().operations["READ"].count for p in parts[:1]) > 0
    assert rec.m.records["bands"] == whole.m.records["bands"]  # the records stay, in place
    merged = Recorder.merged([*parts, rec])
    expected = whole.measurement()
    assert merged.warmup["READ"].count > 0 and merged.operations["READ"].not_found > 0
    assert merged.errors and merged.counters["retries"] > 0
    assert merged.to_dict() == expected.to_dict()


def test_an_operation_that_only_failed_somewhere_leaves_the_minimum_latency_alone():
    """Merging stats whose histogram is empty (an operation that only failed in one thread, or
    in one snapshot's handed-over parts) keeps the minimum: HdrHistogram's add of an empty one
    set it to 0, for good."""
    a, b = Recorder(1), Recorder(1)
    t = a.base + 10 * NS
    for i in range(5000):  # distinct latencies past MAX_DISTINCT_LATENCIES: a's histogram fills
        a.ok("READ", t, t + 700_000 + i * 1000)
        t += 1_000_000
    a.ok("READ", t + 2 * NS, t + 2 * NS + 900_000)
    b.error("READ", "connection", "OperationalError")
    for order in ((a, b), (b, a)):
        merged = Recorder.merged(copy.deepcopy(list(order)))
        assert merged.operations["READ"].summary()["min_us"] == 700, merged.operations["READ"].summary()
        assert merged.operations["READ"].errors == 1
    part = copy.deepcopy(a).measurement()
    part.merge(copy.deepcopy(b).measurement())
    assert part.operations["READ"].summary()["min_us"] == 700


def test_the_histogram_mean_is_hdrhistogram_s_own():
    """recorder.Histogram computes the mean without HdrHistogram's iterator: the same value, for
    histograms recorded, merged and decoded, over the whole range of latencies."""
    import random

    from hdrh.histogram import HdrHistogram

    from dbswarm.measure.recorder import HIST_DIGITS, HIST_HIGHEST_US, HIST_LOWEST_US, decode_histogram, new_histogram
    rng = random.Random(1)
    merged = new_histogram()
    for _ in range(12):
        ours, theirs = new_histogram(), HdrHistogram(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_DIGITS)
        for _ in range(rng.randint(1, 2000)):
            value = min(int(rng.lognormvariate(rng.uniform(1, 12), rng.uniform(0.2, 3))) + 1, HIST_HIGHEST_US)
            count = rng.randint(1, 5)
            ours.record_value(value, count)
            theirs.record_value(value, count)
        merged.add(ours)
        decoded = decode_histogram(ours.encode().decode("ascii"))
        assert ours.get_mean_value() == theirs.get_mean_value() == decoded.get_mean_value() > 0
    reference = HdrHistogram(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_DIGITS)
    reference.add(merged)
    assert merged.get_mean_value() == reference.get_mean_value()
    assert new_histogram().get_mean_value() == 0.0
