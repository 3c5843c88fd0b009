"""results.metrics: refused input names its field; the remote-write body's framing."""
import pytest

from dbswarm.campaign.spec import load_campaign
from dbswarm.errors import CampaignError
from dbswarm.run.runtime import metrics


def _campaign(prometheus):
    return {"name": "m", "workload": {"preset": "a", "recordcount": 10, "operationcount": 10},
            "results": {"metrics": {"prometheus": prometheus}}}


@pytest.mark.parametrize("prometheus, words", [
    ({}, "results.metrics.prometheus.remote_write"),
    ({"remote_write": "ftp://x/api/v1/write"}, "http(s)://"),
    ({"remote_write": "http://u:pw@prom:9090/api/v1/write"}, "no credentials in the URL"),
    ({"remote_write": "http://prom:9090/w", "password": "literal"}, "results.metrics.prometheus.password"),
    ({"remote_write": "http://prom:9090/w", "labels": {"shard": "x"}}, "label 'shard'"),
    ({"remote_write": "http://prom:9090/w", "labels": {"__name__": "x"}}, "label '__name__'"),
    ({"remote_write": "http://prom:9090/w", "labels": {"a-b": "x"}}, "label 'a-b'"),
    ({"remote_write": "http://prom:9090/w", "labels": {"team": "x" * 300}}, "at most 256"),
    ({"remote_write": "http://prom:9090/w", "timeout_s": 0}, "results.metrics.prometheus.timeout_s"),
    ({"remote_write": "http://prom:9090/w", "interval": 5}, "results.metrics.prometheus.interval"),
])
def test_bad_metrics_settings_are_refused_by_field(prometheus, words):
    with pytest.raises(CampaignError) as err:
        load_campaign(_campaign(prometheus))
    assert words in str(err.value)


def test_good_settings_reach_the_plan():
    from dbswarm.campaign.plan import make_plan
    campaign, runs = load_campaign(_campaign({"remote_write": "https://prom.example/api/v1/write",
                                              "username": "u", "password": {"env": "PROM_PW"}}))
    plan = make_plan(campaign, runs, "m-1", 2)
    assert plan.metrics["prometheus"]["password"] == {"env": "PROM_PW"}  # a reference, never the value


def _unsnappy(block: bytes) -> bytes:
    pos, shift, length = 0, 0, 0
    while True:
        b = block[pos]
        pos += 1
        length |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    out = bytearray()
    while pos < len(block):
        assert block[pos] & 3 == 0  # a literal
        m = block[pos] >> 2
        pos += 1
        size = m + 1 if m < 60 else int.from_bytes(block[pos:pos + m - 59], "little") + 1
        pos += 0 if m < 60 else m - 59
        out += block[pos:pos + size]
        pos += size
    assert len(out) == length
    return bytes(out)


def test_errors_per_operation_and_class_and_the_counters_are_pushed():
    from dbswarm.measure.recorder import Measurement
    m = Measurement()
    m.timeline.start = 1000
    m.timeline.ops = {"UPDATE": [5, 7]}
    m.timeline.errors = [1, 2]
    m.errors = {"UPDATE:retryable:deadlock": 3}
    m.counters = {"retries": 3}
    push = metrics.PrometheusPush({"remote_write": "http://127.0.0.1:9/api/v1/write"}, {"campaign": "c"})
    try:
        raw = _unsnappy(push.encode(metrics.Figures(m, 1000, 1002, True, 1003.0)))
    finally:
        push.close(wait_s=0.1)
    for text in (b"dbswarm_errors_by_class_total", b"UPDATE", b"retryable", b"deadlock", b"dbswarm_counter",
                 b"retries", b"dbswarm_operations_total", b"dbswarm_errors_total"):
        assert text in raw, text


def test_a_snappy_block_of_literals_frames_any_length():
    for n in (0, 1, 59, 60, 61, 255, 256, 257, 65536, 65537, 200_000):
        data = bytes(i % 251 for i in range(n))
        # decoded as the decoder Prometheus runs reads it: the varint length, then literal chunks
        assert _unsnappy(metrics.snappy_block(data)) == data
