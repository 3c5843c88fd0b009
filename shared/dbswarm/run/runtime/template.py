"""Read template.yaml the way a deployment would see it, without deploying it.

``SamApp`` gives the functions (code folder, handler, timeout, memory, environment),
the state machine (its ASL definition with ``DefinitionSubstitutions`` applied) and the
schedules (their ``Input``) of a SAM template, resolving the intrinsic functions the
template uses (Ref, GetAtt, Sub, If, Join, Equals, Not, Select, Split) against
parameters and made-up physical names. ``dbswarm.run.runtime.emulator`` builds its emulation from
this; the tests check the template and the ASL with it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

from dbswarm.errors import DbswarmError

PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_.:]+)\}")
NO_VALUE = object()
REPO_ROOT = Path(__file__).resolve().parents[4]


class TemplateError(DbswarmError):
    """The template uses something this loader cannot resolve, or is inconsistent."""


# ---- YAML with CloudFormation's short tags -------------------------------------------------

# libyaml's loader when PyYAML has it (template.yaml: 0.3 s of CPU in pure Python, 0.03 with it)
class _CfnLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    pass


def _tag(name: Any) -> Any:
    long = "Ref" if name == "Ref" else f"Fn::{name}"

    def construct(loader: Any, node: Any) -> Any:
        if isinstance(node, yaml.ScalarNode):
            value = loader.construct_scalar(node)
            if name == "GetAtt":
                value = value.split(".", 1)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)
        return {long: value}
    return construct


for _name in ("Ref", "GetAtt", "Sub", "If", "Join", "Equals", "Not", "And", "Or", "Select", "Split",
              "FindInMap", "Base64", "GetAZs", "ImportValue", "Condition"):
    _CfnLoader.add_constructor(f"!{_name}", _tag(_name))


def load_yaml(path: Any) -> dict:
    with open(path) as fh:
        return yaml.load(fh, Loader=_CfnLoader)


# ---- what the loader hands out ---------------------------------------------------------------

@dataclass
class FunctionSpec:
    logical_id: str
    name: str
    arn: str
    code_dir: Path
    handler: str
    runtime: str
    timeout: int
    memory: int
    environment: dict = field(default_factory=dict)

    @property
    def module_file(self) -> Path:
        module, _, _ = self.handler.rpartition(".")
        return self.code_dir / (module.replace(".", "/") + ".py")

    @property
    def function_name(self) -> str:
        return self.handler.rpartition(".")[2]


@dataclass
class StateMachineSpec:
    logical_id: str
    name: str
    arn: str
    definition_path: Path
    substitutions: dict
    definition_text: str          # substitutions applied

    @property
    def definition(self) -> dict:
        return json.loads(self.definition_text)


@dataclass
class ScheduleSpec:
    logical_id: str
    state_machine: str            # logical id
    expression: str
    state: str
    input: dict


class SamApp:
    def __init__(self, path: Any = None, parameters: Optional[dict] = None, *, stack_name: str = "dbswarm",
                 region: str = "us-east-1", account: str = "123456789012") -> None:
        self.path = Path(path or REPO_ROOT / "template.yaml").resolve()
        self.root = self.path.parent
        self.doc = load_yaml(self.path)
        self.stack_name, self.region, self.account = stack_name, region, account
        self.resources: dict = self.doc.get("Resources") or {}
        self.parameters = self._parameters(parameters or {})
        self._conditions: dict = {}

    # -- parameters and names ----------------------------------------------------------
    def _parameters(self, given: Any) -> dict:
        out = {}
        declared = self.doc.get("Parameters") or {}
        unknown = set(given) - set(declared)
        if unknown:
            raise TemplateError(f"unknown template parameter(s): {', '.join(sorted(unknown))}")
        for name, decl in declared.items():
            value = given.get(name, decl.get("Default"))
            if value is None:
                raise TemplateError(f"parameter {name} has no default and no value")
            if decl.get("Type") == "CommaDelimitedList":
                value = [v for v in str(value).split(",")] if not isinstance(value, list) else value
            else:
                value = str(value)
            allowed = decl.get("AllowedValues")
            if allowed and value not in [str(a) for a in allowed]:
                raise TemplateError(f"parameter {name}: {value!r} is not one of {allowed}")
            out[name] = value
        return out

    def physical_name(self, logical_id: str) -> str:
        res = self.resources[logical_id]
        props = res.get("Properties") or {}
        kind = res["Type"]
        if kind in ("AWS::Serverless::StateMachine", "AWS::StepFunctions::StateMachine") and props.get("Name"):
            return self.resolve(props["Name"])
        if kind in ("AWS::Serverless::Function", "AWS::Lambda::Function") and props.get("FunctionName"):
            return self.resolve(props["FunctionName"])
        if kind == "AWS::S3::Bucket":
            return self.resolve(props["BucketName"]) if props.get("BucketName") else \
                f"{self.stack_name}-{logical_id}".lower()
        return f"{self.stack_name}-{logical_id}"

    def arn(self, logical_id: str) -> str:
        kind = self.resources[logical_id]["Type"]
        name = self.physical_name(logical_id)
        if kind.endswith("::Function"):
            return f"arn:aws:lambda:{self.region}:{self.account}:function:{name}"
        if kind.endswith("::StateMachine"):
            return f"arn:aws:states:{self.region}:{self.account}:stateMachine:{name}"
        if kind == "AWS::S3::Bucket":
            return f"arn:aws:s3:::{name}"
        if kind.endswith("::LayerVersion"):
            return f"arn:aws:lambda:{self.region}:{self.account}:layer:{name}:1"
        return f"arn:aws:cloudformation:{self.region}:{self.account}:{name}"

    # -- intrinsic functions ---------------------------------------------------------------
    def _ref(self, name: Any) -> Any:
        pseudo = {"AWS::Region": self.region, "AWS::AccountId": self.account, "AWS::Partition": "aws",
                  "AWS::StackName": self.stack_name, "AWS::URLSuffix": "amazonaws.com",
                  "AWS::StackId": f"arn:aws:cloudformation:{self.region}:{self.account}:stack/{self.stack_name}/0",
                  "AWS::NoValue": NO_VALUE}
        if name in pseudo:
            return pseudo[name]
        if name in self.parameters:
            return self.parameters[name]
        if name in self.resources:
            kind = self.resources[name]["Type"]
            if kind.endswith("::StateMachine") or kind.endswith("::LayerVersion"):
                return self.arn(name)
            return self.physical_name(name)
        raise TemplateError(f"Ref to unknown name {name!r}")

    def _getatt(self, logical_id: Any, attr: Any) -> Any:
        if logical_id not in self.resources:
            raise TemplateError(f"GetAtt of unknown resource {logical_id!r}")
        if attr == "Arn":
            return self.arn(logical_id)
        if attr == "Name":
            return self.physical_name(logical_id)
        raise TemplateError(f"GetAtt {logical_id}.{attr} is not supported by the local loader")

    def _sub(self, template: str, variables: dict) -> str:
        def one(m: Any) -> Any:
            key = m.group(1)
            if key.startswith("!"):
                return "${" + key[1:] + "}"
            if key in variables:
                return str(self.resolve(variables[key]))
            if "." in key and not key.startswith("AWS::"):
                return str(self._getatt(*key.split(".", 1)))
            return str(self._ref(key))
        return re.sub(r"\$\{(!?[A-Za-z0-9_.:]+)\}", one, template)

    def condition(self, name: Any) -> bool:
        if name not in self._conditions:
            decl = (self.doc.get("Conditions") or {}).get(name)
            if decl is None:
                raise TemplateError(f"unknown condition {name!r}")
            self._conditions[name] = bool(self.resolve(decl))
        return self._conditions[name]

    def resolve(self, value: Any) -> Any:  # noqa: C901 (one case per intrinsic function)
        """A template value with every intrinsic function evaluated (NO_VALUE dropped)."""
        if isinstance(value, list):
            return [v for v in (self.resolve(x) for x in value) if v is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (key, arg), = value.items()
            if key == "Ref":
                return self._ref(arg)
            if key == "Fn::GetAtt":
                parts = arg if isinstance(arg, list) else str(arg).split(".", 1)
                return self._getatt(*parts)
            if key == "Fn::Sub":
                if isinstance(arg, list):
                    return self._sub(arg[0], arg[1])
                return self._sub(arg, {})
            if key == "Fn::If":
                cond, yes, no = arg
                return self.resolve(yes if self.condition(cond) else no)
            if key == "Fn::Join":
                sep, items = arg
                return str(sep).join(str(x) for x in self.resolve(items))
            if key == "Fn::Equals":
                a, b = (self.resolve(x) for x in arg)
                return a == b
            if key == "Fn::Not":
                return not self.resolve(arg[0])
            if key == "Fn::And":
                return all(self.resolve(x) for x in arg)
            if key == "Fn::Or":
                return any(self.resolve(x) for x in arg)
            if key == "Condition":
                return self.condition(arg)
            if key == "Fn::Select":
                index, items = arg
                return self.resolve(items)[int(self.resolve(index))]
            if key == "Fn::Split":
                sep, text = arg
                return str(self.resolve(text)).split(sep)
            if key.startswith("Fn::"):
                raise TemplateError(f"{key} is not supported by the local loader")
        return {k: r for k, r in ((k, self.resolve(v)) for k, v in value.items()) if r is not NO_VALUE}

    # -- resources ---------------------------------------------------------------------
    def _of_type(self, *kinds: Any) -> list[str]:
        return [k for k, r in self.resources.items() if r.get("Type") in kinds]

    def functions(self) -> dict[str, FunctionSpec]:
        glob = ((self.doc.get("Globals") or {}).get("Function") or {})
        out = {}
        for lid in self._of_type("AWS::Serverless::Function"):
            props = self.resources[lid].get("Properties") or {}
            env = dict(((glob.get("Environment") or {}).get("Variables") or {}))
            env.update(((props.get("Environment") or {}).get("Variables") or {}))
            spec_env = {k: str(v) for k, v in self.resolve(env).items()}

            def prop(name: Any, default: Any = None, props: Any = props) -> Any:
                return self.resolve(props[name]) if name in props else self.resolve(glob.get(name, default))
            code = prop("CodeUri")
            if not isinstance(code, str):
                raise TemplateError(f"{lid}: CodeUri must be a local folder for local execution")
            handler = prop("Handler")
            out[lid] = FunctionSpec(lid, self.physical_name(lid), self.arn(lid), (self.root / code).resolve(),
                                    handler, prop("Runtime"), int(prop("Timeout", 3)), int(prop("MemorySize", 128)),
                                    spec_env)
        return out

    def state_machines(self) -> dict[str, StateMachineSpec]:
        out = {}
        for lid in self._of_type("AWS::Serverless::StateMachine"):
            props = self.resources[lid].get("Properties") or {}
            if "DefinitionUri" not in props or not isinstance(props["DefinitionUri"], str):
                raise TemplateError(f"{lid}: the local loader reads a DefinitionUri file")
            path = (self.root / props["DefinitionUri"]).resolve()
            subs = {k: str(self.resolve(v)) for k, v in (props.get("DefinitionSubstitutions") or {}).items()}
            text = substitute(path.read_text(), subs, where=str(path))
            out[lid] = StateMachineSpec(lid, self.physical_name(lid), self.arn(lid), path, subs, text)
        return out

    def state_machine(self, logical_id: Optional[str] = None) -> StateMachineSpec:
        machines = self.state_machines()
        if logical_id is None:
            if len(machines) != 1:
                raise TemplateError(f"the template has {len(machines)} state machines: name one")
            return next(iter(machines.values()))
        return machines[logical_id]

    def schedules(self) -> list[ScheduleSpec]:
        out = []
        for lid in self._of_type("AWS::Serverless::StateMachine"):
            for ev_id, ev in ((self.resources[lid].get("Properties") or {}).get("Events") or {}).items():
                if ev.get("Type") not in ("ScheduleV2", "Schedule"):
                    continue
                p = ev.get("Properties") or {}
                text = self.resolve(p.get("Input", "{}"))
                state = self.resolve(p.get("State", "ENABLED"))
                if "Enabled" in p:
                    state = "ENABLED" if self.resolve(p["Enabled"]) else "DISABLED"
                out.append(ScheduleSpec(f"{lid}{ev_id}", lid, self.resolve(p.get("ScheduleExpression")),
                                        state, json.loads(text)))
        return out


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


def substitute(text: str, substitutions: dict, where: str = "definition") -> str:
    """DefinitionSubstitutions applied as Step Functions does; every ${...} must have a value."""
    missing = placeholders(text) - set(substitutions)
    if missing:
        raise TemplateError(f"{where}: no DefinitionSubstitutions value for {', '.join(sorted(missing))}")
    out = PLACEHOLDER.sub(lambda m: str(substitutions[m.group(1)]), text)
    try:
        json.loads(out)
    except ValueError as err:
        raise TemplateError(f"{where}: not valid JSON after substitution: {err}") from None
    return out
