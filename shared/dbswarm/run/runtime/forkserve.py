"""The forkserver that local mode's function processes are forked from (``emulator``), started
as early as the command knows it will run a campaign (docs/decisions/0018).

Its preload (the library's steps, and boto3 with botocore's models read when the functions
will reach AWS or the emulation's S3) is imported once, in its own process: started before
the runner imports moto and deploys, it does so on the other CPU meanwhile instead of after,
when the first function call waits for it. Only the standard library is imported here.
"""
from __future__ import annotations

import multiprocessing as mp
import os
from multiprocessing import forkserver
from typing import Optional

# the steps, and every built-in family (the aggregate step's reports list them all: 0.25 s of
# CPU in that call, on the campaign's critical path, instead of in the forkserver beside it)
PRELOAD = ["dbswarm.run.runtime.emulator", "dbswarm.run.runtime.service", "dbswarm.bindings.sqlite",
           "dbswarm.families.ycsb", "dbswarm.families.sysbench", "dbswarm.families.tpcc.family",
           "dbswarm.families.custom.family"]
AWS_PRELOAD = ["boto3"]  # when the functions reach AWS or the emulation's S3 and Secrets Manager
# set while the forkserver starts: it ignores SIGINT and SIGTERM ("boto3": and reads botocore's
# models); read by dbswarm.run.runtime.emulator as the forkserver imports it
WARM_ENV = "DBSWARM_FORKSERVER_WARM"

_aws: Optional[bool] = None  # whether this process's forkserver preloaded boto3 (None: not started here)


def _pid() -> Optional[int]:
    return getattr(forkserver._forkserver, "_forkserver_pid", None)  # private (CPython 3.11)


def start(aws: bool = True, preload: Optional[list] = None) -> None:
    """This process's forkserver running, with boto3 preloaded if ``aws``. One forkserver per
    process: one started here without boto3 is replaced by one with it when ``aws`` (between
    emulations: one at a time); one with boto3 serves either."""
    global _aws
    if aws and _aws is False:
        stop()
    mp.get_context("forkserver").set_forkserver_preload(list(preload or PRELOAD) + (AWS_PRELOAD if aws else []))
    os.environ[WARM_ENV] = "boto3" if aws else "1"
    try:
        before = _pid()
        forkserver.ensure_running()
        if _pid() != before:
            _aws = aws
    finally:
        os.environ.pop(WARM_ENV, None)


def stop() -> None:
    """Stop this process's forkserver (its function processes have ended), so that the next
    one starts with another preload: multiprocessing's own ``_stop`` (private, for its tests);
    where it is missing the running one is kept (its functions import boto3 themselves)."""
    global _aws
    stop_ = getattr(forkserver._forkserver, "_stop", None)
    if stop_ is not None:
        stop_()
        _aws = None
