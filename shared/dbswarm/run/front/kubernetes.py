"""Kubernetes manifests for a campaign on the indexed path (``dbswarm kubernetes``).

One ConfigMap (the campaign file as written: secrets stay references), one Job for the
coordinator (``dbswarm coordinate``: the state machine's un-sharded steps, in order) and one
Indexed Job for the workers (``completionMode: Indexed``, ``completions = parallelism`` = the
largest shard count of the campaign's runs; each pod runs ``dbswarm worker`` with its
``JOB_COMPLETION_INDEX``). A failed index is started again (``backoffLimitPerIndex``) and
continues from its shard file's checkpoint; bad input (exit 2) fails the index at once.

Credentials never appear inline: the object store's keys and the database password come from
Kubernetes Secrets by name (``secretKeyRef``), or from the pods' service account (IRSA, workload
identity) when no Secret is named. Submitting, following and deleting them through the API:
``dbswarm.run.front.kubernetes_api``.
"""
from __future__ import annotations

from typing import Any, Optional

import yaml

from dbswarm.campaign.cost import estimate
from dbswarm.campaign.plan import plan_run
from dbswarm.campaign.spec import load_campaign, password_refs
from dbswarm.errors import DbswarmError

WORKER_BACKOFF_PER_INDEX = 3
BAD_INPUT_EXIT = 2  # the CLI's exit status for input it refuses: retrying cannot help


def object_base(text: str) -> str:
    """A DNS-1123 label from a campaign id (lower case, [a-z0-9-], at most 52 characters: Job
    names leave room for the pods' suffixes)."""
    out = "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")
    return (out[:52].rstrip("-")) or "dbswarm"


def _env_refs(campaign: Any) -> list[str]:
    """The environment variables the campaign's password references read; a password given
    inline or by file cannot be rendered as a Secret reference."""
    names = []
    for path, ref in password_refs(campaign):
        if isinstance(ref, dict) and ref.get("env"):
            names.append(str(ref["env"]))
        elif not (isinstance(ref, dict) and ref.get("secret")):  # AWS Secrets Manager: read with the pod's AWS access
            raise DbswarmError(f"{path}: on Kubernetes give the password as {{env: NAME}} (rendered as a "
                               f"secretKeyRef of --db-secret) or {{secret: ...}}, not {ref}")
    return sorted(set(names))


def render(campaign_path: str, results: str, campaign_id: str, image: str, namespace: str = "default",
           db_secret: Optional[str] = None, aws_secret: Optional[str] = None, s3_endpoint: Optional[str] = None,
           region: str = "us-east-1", phase_timeout_s: float = 3600.0, workers: int = 4) -> list[dict[str, Any]]:
    """The manifests, as dicts in apply order."""
    if not results.startswith("s3://"):
        raise DbswarmError(f"--results: the pods share the results through object storage: give s3://bucket/prefix, "
                           f"got {results!r}")
    text = open(campaign_path, encoding="utf-8").read()
    campaign, runs = load_campaign(text)
    if campaign.search or campaign.fanout.adaptive:
        raise DbswarmError("search / fanout.adaptive: the indexed path does not run peak searches or adaptive "
                           "fan-outs yet")
    env_names = _env_refs(campaign)
    if env_names and not db_secret:
        raise DbswarmError(f"--db-secret: the campaign reads {', '.join(env_names)} from the environment; name the "
                           "Kubernetes Secret that holds it (a key of that name)")
    if workers < 1:
        raise DbswarmError(f"--workers: expected a whole number >= 1, got {workers}")
    # a run's shards: its fanout's, else one per worker (the coordinator plans with the same count)
    shards = max(len(plan_run(campaign, run, cpu_count=workers)) for run in runs)
    memory_mb = int(estimate(campaign, runs, cpu_count=workers)["lambda"]["worker_memory_mb"])
    base = object_base(campaign_id)
    labels = {"app.kubernetes.io/name": "dbswarm", "dbswarm/campaign": base}
    env: list[dict[str, Any]] = [{"name": "AWS_DEFAULT_REGION", "value": region}]
    if s3_endpoint:
        env.append({"name": "AWS_ENDPOINT_URL_S3", "value": s3_endpoint})
    if aws_secret:
        env += [{"name": k, "valueFrom": {"secretKeyRef": {"name": aws_secret, "key": k}}}
                for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")]
    env += [{"name": n, "valueFrom": {"secretKeyRef": {"name": db_secret, "key": n}}} for n in env_names]
    volume = {"name": "campaign", "configMap": {"name": f"{base}-campaign"}}
    mount = {"name": "campaign", "mountPath": "/campaign", "readOnly": True}
    resources = {"requests": {"cpu": "1", "memory": f"{memory_mb}Mi"}, "limits": {"memory": f"{memory_mb}Mi"}}

    def container(name: str, args: list[str]) -> dict[str, Any]:
        return {"name": name, "image": image, "args": args, "env": env, "volumeMounts": [mount],
                "resources": resources}

    common = ["--results", results, "--campaign-id", campaign_id]
    config_map: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": f"{base}-campaign", "namespace": namespace, "labels": labels},
                  "data": {"campaign.yaml": text}}
    coordinator: dict[str, Any] = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"{base}-coordinator", "namespace": namespace, "labels": labels},
        "spec": {"backoffLimit": 0,  # a second plan of the same id is refused: follow it, do not retry
                 "template": {"metadata": {"labels": labels}, "spec": {
                     "restartPolicy": "Never", "volumes": [volume],
                     "containers": [container("coordinator", ["coordinate", "/campaign/campaign.yaml", *common,
                                                              "--phase-timeout", f"{phase_timeout_s:g}",
                                                              "--workers", str(workers)])]}}}}
    worker_job: dict[str, Any] = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"{base}-workers", "namespace": namespace, "labels": labels},
        "spec": {"completionMode": "Indexed", "completions": shards, "parallelism": shards,
                 "backoffLimitPerIndex": WORKER_BACKOFF_PER_INDEX,
                 "podFailurePolicy": {"rules": [
                     {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [BAD_INPUT_EXIT]}},
                     {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]},
                 "template": {"metadata": {"labels": labels}, "spec": {
                     "restartPolicy": "Never", "volumes": [volume],
                     "containers": [container("worker", ["worker", *common])]}}}}
    return [config_map, coordinator, worker_job]


def render_yaml(manifests: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(manifests, sort_keys=False, width=120)
