"""MariaDB's SQL prepared statements (bindings/mysql_prepared.py): which servers take them, and
what a connection sends when the server refuses to prepare a statement. The statements on a
real MariaDB: tests/contract/test_binding_contract.py (every driver) and below."""
from __future__ import annotations

import pytest

from dbswarm.bindings.mysql_prepared import ServerPrepared, server_error_code, server_supports, statement_kind


@pytest.mark.parametrize("info,ok", (
    ("10.11.6-MariaDB-0+deb12u1", True), ("5.5.5-10.11.6-MariaDB", True), ("11.4.2-MariaDB-log", True),
    ("10.2.3-MariaDB", True), ("10.2.2-MariaDB", False), ("10.1.48-MariaDB", False),
    ("8.0.36", False), ("8.4.0-log", False), ("", False), (None, False)))
def test_only_mariadb_from_10_2_3_executes_with_literals(info, ok):
    # MySQL's EXECUTE ... USING takes user variables only; MariaDB's takes expressions from 10.2.3
    assert server_supports(info) is ok


def test_statement_kind_is_the_first_word():
    assert statement_kind("SELECT c FROM t WHERE id = %s") == "select"
    assert statement_kind("  update t SET k = k + 1") == "update"
    assert statement_kind("(SELECT 1)") == "statement"


class _Refusal(Exception):
    pass


def _prepared(codes):
    """A ServerPrepared whose server answers PREPARE with the next of ``codes`` (None: prepared)."""
    sent = []

    def prepare(name, sql):
        sent.append((name, sql))
        code = codes.pop(0)
        if code is not None:
            raise _Refusal(code, "refused")
    return ServerPrepared({"SELECT c FROM t WHERE id = %s", "UPDATE t SET c = %s WHERE id = %s", "SELECT 1"},
                          prepare, server_error_code), sent


def test_a_marked_statement_is_prepared_once_and_executed_with_its_parameters():
    ps, sent = _prepared([None, None])
    assert ps.text("SELECT c FROM t WHERE id = %s") == "EXECUTE dbswarm_select_1 USING %s"
    assert ps.text("SELECT c FROM t WHERE id = %s") == "EXECUTE dbswarm_select_1 USING %s"
    assert ps.text("UPDATE t SET c = %s WHERE id = %s") == "EXECUTE dbswarm_update_2 USING %s, %s"
    assert sent == [("dbswarm_select_1", "SELECT c FROM t WHERE id = ?"),
                    ("dbswarm_update_2", "UPDATE t SET c = ? WHERE id = ?")]
    # unmarked, or without parameters: sent as it is, nothing prepared
    assert ps.text("SELECT 2 FROM t WHERE id = %s") == "SELECT 2 FROM t WHERE id = %s"
    assert ps.text("SELECT 1") == "SELECT 1" and ps.settled("SELECT 1")
    assert len(sent) == 2


def test_a_refusal_for_good_sends_text_for_the_connection_s_life():
    ps, sent = _prepared([1461])  # max_prepared_stmt_count reached
    sql = "SELECT c FROM t WHERE id = %s"
    assert ps.text(sql) == sql and ps.settled(sql)
    assert ps.text(sql) == sql and len(sent) == 1


def test_another_refusal_sends_this_execution_as_text_and_tries_again():
    ps, sent = _prepared([1146, None])  # the table does not exist yet; then it does
    sql = "SELECT c FROM t WHERE id = %s"
    assert ps.text(sql) == sql and not ps.settled(sql)
    assert ps.text(sql) == "EXECUTE dbswarm_select_2 USING %s" and ps.settled(sql)
    assert len(sent) == 2


def test_a_client_error_is_raised_for_the_binding_to_classify():
    ps, _ = _prepared([2013])  # lost connection: not the server's refusal
    with pytest.raises(_Refusal):
        ps.text("SELECT c FROM t WHERE id = %s")


def test_prepare_now_raises_a_refusal_and_prepares_once():
    ps, sent = _prepared([1146, None])
    with pytest.raises(_Refusal):
        ps.prepare_now("SELECT c FROM t WHERE id = %s")
    assert ps.prepare_now("SELECT c FROM t WHERE id = %s") is True
    assert ps.prepare_now("SELECT c FROM t WHERE id = %s") is False
    assert ps.prepare_now("SELECT 2 FROM t WHERE id = %s") is False  # not marked
    assert len(sent) == 2
