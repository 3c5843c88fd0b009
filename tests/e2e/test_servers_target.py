"""`scripts/test-servers target ENGINE` prints a campaign's target block for the running test
server: pasted under a workload it is a valid campaign whose password reference resolves, and
its URL reaches the server."""
import subprocess

import pytest

from dbswarm import bindings
from dbswarm.bindings.base import Connection
from dbswarm.campaign.spec import load_campaign, local_reference_problems
from dbswarm.credentials import secrets
from tests import servers

pytestmark = pytest.mark.servers


@pytest.mark.parametrize("engine", ["postgresql", "mysql", "mongodb"])
def test_the_printed_target_block_is_a_campaign_that_reaches_the_server(engine):
    env = servers.start()
    proc = subprocess.run([str(servers.SCRIPT), "target", engine, env["DBSWARM_TEST_DIR"]], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    block = proc.stdout
    assert block.startswith(f"# the {engine} test server") and "\ntarget:\n" in block
    campaign, runs = load_campaign(f"name: t35-{engine}\n{block}workload: {{recordcount: 10, operationcount: 10}}\n")
    assert local_reference_problems(campaign) == []
    target = runs[0].target
    assert target.engine == engine and target.url == servers.target(engine, env)["url"]
    if engine == "mongodb":  # FerretDB: no password; the backend URL that makes _id lookups fast
        assert target.password is None and target.options["ferretdb_backend_url"] == servers.ferretdb_backend_url(env)
    binding = bindings.get(engine)(Connection(engine=engine, url=target.url, options=dict(target.options or {}),
                                              password=secrets.resolve(target.password), display=engine))
    binding.connect()
    try:
        assert binding.describe()
    finally:
        binding.close()


def test_an_unknown_engine_is_named():
    proc = subprocess.run([str(servers.SCRIPT), "target", "oracle"], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "postgresql | mysql | mongodb" in proc.stderr and "'oracle'" in proc.stderr
