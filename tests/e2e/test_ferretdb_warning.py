"""A FerretDB target without target.options.ferretdb_backend_url runs every _id lookup as a scan
(docs/targets.md): the result knows it is FerretDB (the server says so) and warns, beside the
server's other warnings; with the option, no such warning."""
import json
from pathlib import Path

import pytest

from dbswarm.results.aggregate import ferretdb_warnings
from dbswarm.run.runtime.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.servers, pytest.mark.slow]


def test_the_warning_follows_the_server_and_the_option():
    assert ferretdb_warnings({"server": {"ferretdb_version": "v1.24.0"}, "ferretdb_backend_url": False})
    assert ferretdb_warnings({"server": {"ferretdb_version": "v1.24.0"}, "ferretdb_backend_url": True}) == []
    assert ferretdb_warnings({"server": {"server_version": "7.0.5"}, "ferretdb_backend_url": False}) == []
    assert ferretdb_warnings(None) == []


@pytest.mark.parametrize("with_backend", [False, True])
def test_a_ferretdb_campaign_without_the_backend_url_is_warned(tmp_path, with_backend):
    env = servers.start()
    target = servers.target("mongodb", env)
    if not with_backend:
        target.pop("options")
    out = run_campaign({"name": f"ferret-warn-{int(with_backend)}", "seed": 1, "target": target,
                        "workload": {"table": f"h35ferret{int(with_backend)}", "recordcount": 50,
                                     "operationcount": 100, "threads": 1, "preset": "S2"},
                        "fanout": {"shards": 1}, "phases": ["prepare", "load", "run", "cleanup"]},
                       str(tmp_path), show_progress=False, log=lambda *a: None)
    result = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
    run = result["runs"][0]["phases"]["run"]
    assert run["binding_settings"]["server"]["ferretdb_version"]
    warned = [w for w in run["server"]["warnings"] if "ferretdb_backend_url" in w]
    assert bool(warned) is not with_backend, run["server"]["warnings"]
    if warned:
        summary = (Path(out["store"]) / out["campaign_id"] / "summary.md").read_text()
        assert "without target.options.ferretdb_backend_url" in summary
