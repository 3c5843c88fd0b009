import pytest

from dbswarm.campaign.spec import load_campaign
from dbswarm.families.presets import SERVICE_MODELS, YCSB_WORKLOADS, parse_ratio

PUBLISHED = {  # SPEC 2.1: read, update, insert
    "S1": (0, 0, 1.0), "S2": (0.10, 0.90, 0), "S3": (0.65, 0.10, 0.25), "S4": (0.90, 0.05, 0.05),
    "S5": (0.50, 0.50, 0), "S6": (1.0, 0, 0), "S7": (0.95, 0.05, 0), "S8": (0.05, 0.95, 0), "S9": (0, 1.0, 0),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_service_model_proportions(name):
    _, runs = load_campaign({"workload": {"preset": name}})
    w = runs[0].workload
    assert (w.readproportion, w.updateproportion, w.insertproportion) == pytest.approx(PUBLISHED[name])
    assert w.scanproportion == 0 and w.readmodifywriteproportion == 0


def test_ycsb_core_workloads():
    _, runs = load_campaign({"matrix": {"preset": list("abcdef")}})
    by = {r.workload.preset: r.workload for r in runs}
    assert by["a"].mix() == {"read": 0.5, "update": 0.5}
    assert by["d"].requestdistribution == "latest" and by["d"].insertproportion == 0.05
    assert by["e"].scanproportion == 0.95 and by["e"].maxscanlength == 100
    assert by["f"].readmodifywriteproportion == 0.5


def test_every_preset_sums_to_one():
    for props in {**SERVICE_MODELS, **YCSB_WORKLOADS}.values():
        assert sum(v for k, v in props.items() if k.endswith("proportion")) == pytest.approx(1.0)


def test_read_write_ratio_presets():
    assert parse_ratio("95:5")["readproportion"] == pytest.approx(0.95)
    _, runs = load_campaign({"matrix": {"preset": ["100:0", "50:50", "0:100"]}})
    assert [r.workload.readproportion for r in runs] == [1.0, 0.5, 0.0]


def test_sysbench_read_write_has_18_statements_and_20_queries():
    import random

    from dbswarm.families.sysbench import SysbenchClient
    _, runs = load_campaign({"workload": {"family": "sysbench"}})
    r, w, o = SysbenchClient(runs[0].workload, random.Random(1)).queries_per_event()
    assert (r, w, o) == (14, 4, 2) and r + w == 18


@pytest.mark.parametrize("point_selects", [1, 3])
def test_sysbench_point_select_body_matches_the_general_event(point_selects):
    """oltp_point_select runs a shortcut body; it must send what the general event sends
    (same tables, same ids, same draws) and count the same queries."""
    import random

    from dbswarm.families.base import stepwise
    from dbswarm.families.sysbench import SysbenchClient

    class Calls:
        """A session that logs what it is asked to run, on statements named kind:table
        (the selects through st.counters[kind][table], as ("select", "kind:table", *params))."""
        def __init__(self):
            self.log = []
            self.b = self
            log = self.log

            class Kinds(dict):
                def __missing__(self, kind):
                    per_table = self[kind] = PerTable(kind)
                    return per_table

            class PerTable:
                def __init__(self, kind):
                    self.kind = kind

                def __getitem__(self, n):
                    return lambda params: log.append(("select", f"{self.kind}:{n}", *params))
            self.counters = Kinds()

        def sql(self, kind, n):
            return f"{kind}:{n}"

        def __getattr__(self, name):
            return lambda *args: self.log.append((name, *args))

    _, runs = load_campaign({"workload": {"family": "sysbench", "test": "oltp_point_select", "tables": 4,
                                          "point_selects": point_selects}})
    w = runs[0].workload
    fast, general = SysbenchClient(w, random.Random(7)), SysbenchClient(w, random.Random(7))
    # the shortcut is the one a thread runs; the multiplexer drives the general event's steps
    assert fast.body.func is SysbenchClient._point_selects and fast.body.steps == fast._event
    a, b, qa, qb = Calls(), Calls(), [0, 0, 0], [0, 0, 0]
    general_body = stepwise(general._event)
    for _ in range(200):
        fast.body(a, qa)
        general_body(b, qb)
    assert a.log == b.log and qa == qb == [200 * point_selects, 0, 0]
    assert {c[0] for c in a.log} == {"select"} and {c[1].split(":")[0] for c in a.log} == {"point_select"}
    assert len({c[1] for c in a.log}) == 4  # every table


def test_sysbench_events_with_other_groups_use_the_general_event():
    import random

    from dbswarm.families.sysbench import SysbenchClient
    for test in ("oltp_read_only", "oltp_read_write", "oltp_write_only"):
        _, runs = load_campaign({"workload": {"family": "sysbench", "test": test}})
        c = SysbenchClient(runs[0].workload, random.Random(1))
        assert c.body.steps == c._event, test  # the general event, described as steps


@pytest.mark.parametrize("fieldlength", [100, 7, 10_000])
def test_ycsb_record_values_are_pool_windows_of_the_field_length(fieldlength):
    import random

    from dbswarm.families.ycsb import YcsbClient, YcsbWorkload
    w = YcsbWorkload.model_validate({"family": "ycsb", "recordcount": 10, "fieldlength": fieldlength})
    client = YcsbClient(w, random.Random(5), 0, 1)
    records = [client.all_values() for _ in range(50)]
    for values in records:
        assert list(values) == [f"field{i}" for i in range(10)]
        assert all(len(v) == fieldlength and v in client.pool for v in values.values())
        if fieldlength * 10 <= len(client.pool):  # one window per record, cut into the fields
            assert "".join(values.values()) in client.pool
    assert len({tuple(v.values()) for v in records}) == 50  # records differ
