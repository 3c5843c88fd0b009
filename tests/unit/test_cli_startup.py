"""`dbswarm --help` and the parser import none of the library's heavy modules (issue 60: the CLI
starts at once), and the constants the parser shows are the library's."""
import json
import subprocess
import sys

from dbswarm import cli
from dbswarm.results import compare
from dbswarm.run.front import tpcc_check

HEAVY = ("pydantic", "boto3", "moto", "psycopg", "pymongo", "MySQLdb", "hdrh", "dbswarm.campaign.spec",
         "dbswarm.engine.worker", "dbswarm.results.aggregate", "dbswarm.run.runtime.service",
         "urllib.request", "http.client")  # the remote commands' HTTP client: imported when they call


def test_the_parser_and_help_import_nothing_heavy():
    code = ("import sys, contextlib, io\n"
            "from dbswarm import cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            "        cli.main(['--help'])\n"
            "    except SystemExit:\n"
            "        pass\n"
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_schema_prints_the_published_file_equal_to_the_models(capsys):
    from dbswarm.campaign.spec import json_schema
    from dbswarm.documents import result_json_schema
    assert cli.main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == json_schema()
    assert cli.main(["schema", "--result"]) == 0
    assert json.loads(capsys.readouterr().out) == result_json_schema()


def test_the_parser_s_defaults_are_the_library_s():
    assert cli.DEFAULT_ALPHA == compare.DEFAULT_ALPHA
    assert cli.TPCC_CHECK_JOBS == tpcc_check.DEFAULT_JOBS


def test_schema_models_builds_what_the_published_file_must_equal(capsys):
    from dbswarm.campaign.spec import json_schema
    assert cli.main(["schema", "--models"]) == 0
    assert json.loads(capsys.readouterr().out) == json_schema()
