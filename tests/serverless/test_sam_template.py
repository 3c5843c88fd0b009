"""dbswarm.run.runtime.template: intrinsic functions resolved the way CloudFormation would."""
import pytest

from dbswarm.run.runtime.template import SamApp, TemplateError

TEMPLATE = """
Parameters:
  Size: {Type: Number, Default: 3}
  Subnets: {Type: CommaDelimitedList, Default: ""}
  Mode: {Type: String, Default: a, AllowedValues: [a, b]}
Conditions:
  HasSubnets: !Not [!Equals [!Join ["", !Ref Subnets], ""]]
Globals:
  Function:
    Runtime: python3.12
    Timeout: 7
    Environment: {Variables: {A: global}}
Resources:
  Bucket: {Type: AWS::S3::Bucket}
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: fn/
      Handler: app.handler
      MemorySize: !Ref Size
      Environment:
        Variables:
          B: !Sub "s3://${Bucket}/${AWS::Region}/${Mode}"
          C: !If [HasSubnets, with-vpc, without]
          D: !GetAtt Machine.Name
          E: !Sub "${!Literal}"
  Machine:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: !Sub "${AWS::StackName}-m"
      DefinitionUri: sm.json
      DefinitionSubstitutions:
        FnArn: !GetAtt Fn.Arn
        Size: !Ref Size
      Events:
        Every:
          Type: ScheduleV2
          Properties:
            ScheduleExpression: rate(1 day)
            State: DISABLED
            Input: !Sub '{"bucket": "${Bucket}"}'
"""


@pytest.fixture
def app_dir(tmp_path):
    (tmp_path / "template.yaml").write_text(TEMPLATE)
    (tmp_path / "fn").mkdir()
    (tmp_path / "fn" / "app.py").write_text("def handler(event, context):\n    return event\n")
    (tmp_path / "sm.json").write_text('{"StartAt": "A", "TimeoutSeconds": ${Size}, "States": {"A": '
                                      '{"Type": "Task", "Resource": "${FnArn}", "End": true}}}')
    return tmp_path


def test_functions_state_machine_and_schedule(app_dir):
    app = SamApp(app_dir / "template.yaml", {"Mode": "b"}, stack_name="st")
    fn = app.functions()["Fn"]
    assert (fn.name, fn.timeout, fn.memory, fn.runtime) == ("st-Fn", 7, 3, "python3.12")
    assert fn.environment == {"A": "global", "B": "s3://st-bucket/us-east-1/b", "C": "without", "D": "st-m",
                              "E": "${Literal}"}
    assert fn.module_file == app_dir / "fn" / "app.py"
    sm = app.state_machine()
    assert sm.arn == "arn:aws:states:us-east-1:123456789012:stateMachine:st-m"
    assert sm.definition["TimeoutSeconds"] == 3
    assert sm.definition["States"]["A"]["Resource"] == fn.arn
    schedule, = app.schedules()
    assert schedule.state == "DISABLED" and schedule.input == {"bucket": "st-bucket"}
    assert SamApp(app_dir / "template.yaml", {"Subnets": "s-1,s-2"}).functions()["Fn"].environment["C"] == "with-vpc"


def test_bad_parameters_and_missing_substitutions(app_dir):
    with pytest.raises(TemplateError, match="unknown template parameter"):
        SamApp(app_dir / "template.yaml", {"Nope": 1})
    with pytest.raises(TemplateError, match="not one of"):
        SamApp(app_dir / "template.yaml", {"Mode": "z"})
    (app_dir / "sm.json").write_text('{"StartAt": "${Missing}"}')
    with pytest.raises(TemplateError, match="no DefinitionSubstitutions value for Missing"):
        SamApp(app_dir / "template.yaml").state_machine()
