"""The text redaction never cuts a document: a base64 histogram that happens to hold a secret
word before its '=' padding ("...M/EzPWdkYmW6KsoEACBWCVE=": "pwd") made the key=value rule mask
from there to the next quote, and result.json stopped being JSON (seen twice in CI)."""
import json

from dbswarm.credentials.redact import redact_text

BLOB = "HISTFAAAADx4nJNpmSzMwMAgywABzFCaEURcm7yEwf4DRGC6AFMgUyQQyzJxMnEzZTPlM/EzPWdkYmW6KsoEACBWCVE="


def test_a_histogram_with_a_secret_word_survives_the_text_redaction():
    doc = {"histograms": {"STOCK_LEVEL": BLOB, "READ": BLOB.replace("PWd", "TOKEN")}, "timeline": {"start": 1}}
    for text in (json.dumps(doc, indent=1), json.dumps(doc)):
        assert json.loads(redact_text(text)) == doc


def test_real_key_value_credentials_are_still_masked():
    assert redact_text("postgresql://h/db?user=u&password=s3cret") == "postgresql://h/db?user=u&password=***"
    assert redact_text("host=db password='a b' port=5432") == "host=db password=*** port=5432"
    assert redact_text('{"url": "mysql://h/db?pwd=x1"}') == '{"url": "mysql://h/db?pwd=***"}'
