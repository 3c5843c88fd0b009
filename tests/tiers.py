"""The tiers of the suite. ``scripts/test -m "not slow"`` is the fast tier, for the development
loop; ``scripts/test`` runs everything (CI). A test is slow where its own ``@pytest.mark.slow`` says
so, or where it is listed here (one place, the measurement beside it, no edit of the test files
other sessions change): conftest.py marks these at collection.

SLOW_FOLDERS: the end-to-end tests (campaigns through ``dbswarm run``, its processes and the
emulated state machine, SAM and moto, servers stopped and started, the fidelity comparisons):
inherently slow, and their subjects (the steps, the families, the bindings, the aggregation, bad
input: tests/unit/test_bad_input.py) have fast tests in tests/unit and tests/contract. The input
files of tests/faults run the CLI in a subprocess per case, and campaigns: 1,006 tests of the
tier with them took 18 min at a load average of ~30 (2026-12-01), most of it theirs; without
them, 802 tests took 86 s with two busy loops beside (load average ~5).

SLOW_TESTS: in tests/unit and tests/contract, the tests that took 3.8 s or more in
``python3 -m pytest -q -m "not slow" --durations=60 tests/unit`` on the 2-CPU machine at a load
average of 15-25 (2026-12-01): statistical tests over many simulated runs (the verdicts, the
comparison's false-alarm rates), property tests with hypothesis, TPC-C's warehouse loads and
consistency conditions, in-process campaigns of the worker and the report (the same code paths
the faster tests of those files take, at larger sizes), a subprocess per shard layout.
"""
from __future__ import annotations

SLOW_FOLDERS = ("tests/e2e/", "tests/faults/", "tests/fidelity/", "tests/serverless/")
SLOW_TESTS = frozenset((
    "unit/test_asl_local.py::test_interpreter_imports_without_moto_ec2_and_batch_stays_importable",
    "unit/test_asl_local.py::test_the_interpreter_builds_one_jsonpath_parser_and_one_client_per_service",
    "unit/test_bad_input.py::test_bogus_page_token_is_a_400_not_a_traceback",
    "unit/test_compare.py::test_the_same_distribution_is_rarely_flagged",
    "unit/test_documents.py::test_result_json_of_a_campaign_matches_the_published_schema",
    "unit/test_generators.py::test_a_pool_is_the_same_string_in_every_process",
    "unit/test_indexed.py::test_the_step_command_runs_a_state_machine_step_with_its_json",
    "unit/test_latency_operations.py::test_a_sysbench_nightly_verdict_judges_write_latency",
    "unit/test_latency_operations.py::test_a_tpcc_nightly_verdict_judges_read_latency",
    "unit/test_measure.py::test_histogram_merge_equals_single_histogram",
    "unit/test_measure.py::test_latencies_added_up_by_bucket_make_the_histogram_one_value_at_a_time_makes",
    "unit/test_measure.py::test_measurement_merge_is_order_independent",
    "unit/test_memory_check.py::test_validate_under_an_address_space_limit_refuses_what_would_die_of_memory_error",
    "unit/test_mysql_driver_option.py::test_default_driver_falls_back_to_the_connector_then_pymysql_and_says_why",
    "unit/test_parallel_units.py::test_a_worker_other_than_gw0_runs_on_a_server_set_of_its_own",
    "unit/test_plan.py::test_default_shards_follow_the_cpu_affinity",
    "unit/test_plan.py::test_ycsb_plan_invariants",
    "unit/test_redact_blobs.py::test_random_interval_tables_survive_the_document_redaction",
    "unit/test_report.py::test_an_average_above_p99_is_said_under_its_table",
    "unit/test_report.py::test_report_html_shows_start_skew_server_cross_check_and_published_figures",
    "unit/test_report.py::test_shard_series_stays_small",
    "unit/test_report.py::test_the_report_shows_its_charts_before_its_tables_and_trims_empty_seconds",
    "unit/test_report.py::test_the_summary_renders_as_rich_tables_in_a_terminal",
    "unit/test_report.py::test_timeseries_csv_has_the_intended_start_percentiles_of_a_paced_run",
    "unit/test_resume_losses.py::test_resume_counts_the_seconds_lost_until_the_dead_call_was_last_alive",
    "unit/test_stalls.py::test_a_blocked_call_is_a_stall_of_its_thread",
    "unit/test_stalls.py::test_a_paced_threads_sleep_is_no_stall",
    "unit/test_stalls.py::test_failed_calls_and_reconnects_are_errors_not_stalls",
    "unit/test_tpcc.py::test_each_condition_fails_when_broken_and_names_the_place",
    "unit/test_tpcc.py::test_every_condition_has_a_break_and_the_load_passes_them_all",
    "unit/test_tpcc.py::test_population_sizes_per_warehouse",
    "unit/test_verdict.py::test_a_single_drop_fails_its_night_only",
    "unit/test_verdict.py::test_a_ten_percent_drop_is_flagged_with_this_machines_noise",
    "unit/test_verdict.py::test_e_divisive_finds_a_step_on_the_right_run",
    "unit/test_verdict.py::test_no_regression_on_30_noisy_runs_of_one_distribution",
    "unit/test_verdict.py::test_one_run_a_night_against_30_of_history_rarely_false_alarms",
    "unit/test_verdict.py::test_the_compared_series_is_in_the_result_and_drawn_in_the_report",
    "unit/test_worker.py::test_a_thread_abandoned_at_a_calls_deadline_continues_the_shard",
    "unit/test_worker.py::test_connecting_is_outside_the_measured_window",
    "unit/test_worker.py::test_continue_and_resume_keeps_exact_totals",
    "unit/test_worker.py::test_resumed_load_is_idempotent",
    "unit/test_worker.py::test_same_seed_same_operations_whatever_the_shard_layout",
    "unit/test_worker.py::test_the_set_up_is_frozen_for_the_window_and_thawed_after",
    "unit/test_worker.py::test_warm_up_samples_are_out_of_the_percentiles_and_in_their_own_section",
    "unit/test_worker.py::test_what_a_skipped_snapshot_was_handed_is_in_the_next_and_in_the_end",
    "contract/test_family_contract.py::test_resuming_equals_an_uninterrupted_run",
    "contract/test_family_contract.py::test_the_loop_does_what_the_reference_does",
    "contract/test_family_contract.py::test_summary_csv_and_report_render_a_merged_result",
))


def is_slow(nodeid: str) -> bool:
    """Whether the fast tier leaves the test out (``nodeid``: pytest's, from the rootdir)."""
    return nodeid.startswith(SLOW_FOLDERS) or nodeid.split("[", 1)[0].removeprefix("tests/") in SLOW_TESTS
