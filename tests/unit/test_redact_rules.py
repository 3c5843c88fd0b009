"""Issue 57 items 1 and 3: the redaction reads any text in linear time (a 40 KB run of letters
took 8 s: the URL, key=value and JSON-pair patterns backtracked), and a password that is a common
word rewrites no document's own words (statuses, engines, ids): it is masked where a secret
stands, and as a whole word in error texts only."""
import time

from dbswarm.credentials.redact import redact_doc, redact_message, redact_text
from tests import timing

N = 60_000
HOSTILE = ["a" * N, "password" * (N // 8), '"' + "pwd" * (N // 3) + '"', "x://" * (N // 4), "x://a:" * (N // 6),
           "pwd" * (N // 3) + "=", "password='x " * (N // 12), '"token": "' * (N // 10), "password=" * (N // 9),
           "a\\" * (N // 2), ("secret" + " " * 5) * (N // 11) + "=",
           "label: " + "a" * N, "label: " + "PasswordTokenPwd" * (N // 16)]  # (a run alone is read as base64)


def test_every_redaction_is_linear_in_the_text():
    start = time.monotonic()
    for text in HOSTILE:
        redact_text(text)
        redact_message(text, ["done"])
        redact_doc({"error": text, "label": text})
    took = time.monotonic() - start
    assert took < timing.timeout(1.0), f"{len(HOSTILE)} texts of {N:,} characters: {took:.2f} s"


def test_a_common_word_password_rewrites_no_document_word():
    doc = {"campaign_id": "faults-done-20261201T000000-ab12", "status": "done", "engine": "postgresql",
           "label": "postgres 16 done", "phases": {"run": {"status": "complete"}},
           "path": "/tmp/done/complete", "ops": {"done": 1},
           "error": "cannot connect: the server said \"done\" (host=db password=done)",
           "warnings": ["postgres said done."], "cause": "States.done"}
    out = redact_doc(doc, extra=["done", "complete", "postgres"])
    assert {k: out[k] for k in ("campaign_id", "status", "engine", "label", "phases", "path", "ops")} == \
        {k: doc[k] for k in ("campaign_id", "status", "engine", "label", "phases", "path", "ops")}
    assert out["error"] == "cannot connect: the server said \"***\" (host=db password=***)"
    assert out["warnings"] == ["*** said ***."]
    assert out["cause"] == "States.done"  # an error's name is a code, not a text


def test_a_short_password_is_masked_only_where_a_secret_stands():
    text = "cannot connect to mysql://u:a@db/app (user=u password=a): a is wrong"
    assert redact_message(text, ["a"]) == "cannot connect to mysql://u:***@db/app (user=u password=***): a is wrong"
    assert redact_text('{"password": "a", "status": "a"}') == '{"password": "***", "status": "a"}'


def test_a_password_is_masked_as_a_whole_word_not_inside_words_or_ids():
    text = "run faults-done-2026 abandoned: done; undone; (done) 'done' done."
    assert redact_message(text, ["done"]) == "run faults-done-2026 abandoned: ***; undone; (***) '***' ***."
