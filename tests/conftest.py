"""Settings for the whole test suite."""
import os

# The machine the suite runs on is shared by other jobs (a loaded CI runner, several sessions
# on two CPUs): every test's client may wait for a CPU far longer than its database takes, and
# be judged bound (docs/client-health.md). That verdict is reported, but it does not fail the
# campaigns of tests about other things; tests of the verdict set results.allow_client_bound
# themselves (it wins over this default) or remove the variable.
os.environ.setdefault("DBSWARM_ALLOW_CLIENT_BOUND", "1")
