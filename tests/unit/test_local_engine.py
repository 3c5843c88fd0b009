"""What local mode gives moto's ASL interpreter (dbswarm.run.runtime.asl_engine): the Lambda
client its Tasks call and the parsed definition kept between processes (docs/decisions/0018)."""
import io
import json

import pytest
from botocore.exceptions import ClientError

from dbswarm.run.runtime import asl_engine
from dbswarm.run.runtime.asl_engine import LocalLambda, cached_program


def _lambda(answers):
    calls = []

    def resolve(name, body):
        calls.append((name, body))
        return answers.get(name)
    return LocalLambda(resolve, "us-east-1"), calls


def test_invoke_answers_as_botocore_answered_from_moto():
    lam, calls = _lambda({"ok": ('{"a": 1}', None),
                          "bad": (None, {"errorType": "ValueError", "errorMessage": "no"})})
    out = lam.invoke(FunctionName="ok", Payload=b'{"x": 2}', InvocationType="RequestResponse")
    assert out["StatusCode"] == 200 and "FunctionError" not in out
    assert isinstance(out["Payload"], io.BytesIO) and json.load(out["Payload"]) == {"a": 1}
    failed = lam.invoke(FunctionName="bad", Payload='{"x": 3}')
    assert failed["StatusCode"] == 200 and failed["FunctionError"] == "Unhandled"
    assert json.load(failed["Payload"]) == {"errorType": "ValueError", "errorMessage": "no"}
    assert calls == [("ok", b'{"x": 2}'), ("bad", b'{"x": 3}')]


def test_invoke_of_a_function_not_deployed_is_aws_s_error():
    lam, _ = _lambda({})
    with pytest.raises(ClientError) as err:
        lam.invoke(FunctionName="arn:aws:lambda:us-east-1:123456789012:function:nope", Payload=b"{}")
    assert err.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_a_response_over_lambda_s_limit_is_its_error():
    lam, _ = _lambda({"big": (json.dumps("x" * (asl_engine.PAYLOAD_LIMIT + 1)), None)})
    out = lam.invoke(FunctionName="big", Payload=b"{}")
    assert out["FunctionError"] == "Unhandled"
    assert json.load(out["Payload"])["errorType"] == "Function.ResponseSizeTooLarge"


class _Program:
    def __init__(self, text):
        self.text, self.states = text, [{"n": 1}]


def test_the_parsed_definition_is_kept_and_each_caller_gets_its_own_copy(tmp_path, monkeypatch):
    monkeypatch.setenv(asl_engine.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(asl_engine, "_memo", {})
    parsed = []

    def parse(text):
        parsed.append(text)
        return _Program(text)
    first = cached_program(parse, '{"StartAt": "A"}')
    assert parsed == ['{"StartAt": "A"}'] and first.text == '{"StartAt": "A"}'
    files = list((tmp_path / "asl").glob("*.pickle"))
    assert len(files) == 1
    monkeypatch.setattr(asl_engine, "_memo", {})  # a new process: from the file, not parsed again
    second = cached_program(parse, '{"StartAt": "A"}')
    assert parsed == ['{"StartAt": "A"}'] and second.text == first.text and second is not first
    second.states[0]["n"] = 2  # an execution's changes stay its own
    assert cached_program(parse, '{"StartAt": "A"}').states == [{"n": 1}]
    cached_program(parse, '{"StartAt": "B"}')  # another definition: parsed, kept beside it
    assert parsed[-1] == '{"StartAt": "B"}' and len(list((tmp_path / "asl").glob("*.pickle"))) == 2


def test_a_cache_file_that_does_not_load_is_parsed_again_and_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv(asl_engine.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(asl_engine, "_memo", {})
    cached_program(_Program, "{}")
    (path,) = (tmp_path / "asl").glob("*.pickle")
    path.write_bytes(b"not a pickle")
    monkeypatch.setattr(asl_engine, "_memo", {})
    assert cached_program(_Program, "{}").text == "{}"
    assert path.read_bytes() != b"not a pickle"


def test_only_the_newest_parsed_definitions_are_kept(tmp_path, monkeypatch):
    monkeypatch.setenv(asl_engine.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(asl_engine, "_memo", {})
    monkeypatch.setattr(asl_engine, "KEEP_PROGRAMS", 3)
    for n in range(5):
        cached_program(_Program, f'{{"n": {n}}}')
    assert len(list((tmp_path / "asl").glob("*.pickle"))) == 3


def test_an_unwritable_cache_leaves_the_parse_standing(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(asl_engine.CACHE_ENV, str(blocker))  # its "asl" folder cannot be made
    monkeypatch.setattr(asl_engine, "_memo", {})
    assert cached_program(_Program, "{}").text == "{}"
