"""{secret: NAME} references resolved from AWS Secrets Manager (moto), cached per container.
That workers do it inside the state machine: test_statemachine.py."""
import json

import boto3
import pytest

from dbswarm.credentials import secrets
from dbswarm.errors import SecretError


@pytest.fixture
def sm(cloud):
    """moto's Secrets Manager (inside the emulation: in-process clients are intercepted)."""
    secrets.clear_cache()
    yield boto3.client("secretsmanager", region_name="us-east-1")
    secrets.clear_cache()


def test_json_secret_password_key_and_cache(sm):
    sm.create_secret(Name="dbswarm/pg", SecretString=json.dumps({"username": "u", "password": "p@ss"}))
    assert secrets.resolve({"secret": "dbswarm/pg"}) == "p@ss"
    sm.update_secret(SecretId="dbswarm/pg", SecretString=json.dumps({"password": "rotated"}))
    assert secrets.resolve({"secret": "dbswarm/pg"}) == "p@ss"      # cached for the container's life
    secrets.clear_cache()
    assert secrets.resolve({"secret": "dbswarm/pg"}) == "rotated"


def test_plain_string_secret(sm):
    sm.create_secret(Name="dbswarm/mongo", SecretString="plain-value")
    assert secrets.resolve({"secret": "dbswarm/mongo"}) == "plain-value"


def test_missing_secret_names_the_reference_not_a_value(sm):
    with pytest.raises(SecretError) as err:
        secrets.resolve({"secret": "dbswarm/absent"})
    assert "dbswarm/absent" in str(err.value) and "ResourceNotFoundException" in str(err.value)
