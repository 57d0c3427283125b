"""`deploy/kubernetes/` renders with `kubectl kustomize` into a deployment Kubernetes would accept
(every object checked against the API schemas of the version the README names, by
kubernetes-validate; KEDA's ScaledObject against the schema beside this file, written from KEDA's
CRD since kubernetes-validate knows no custom resources), and keeps the promises a platform team
relies on: a worker outlives its longest activity, the web app has more than one replica, secrets
are only referenced, and the probes ask endpoints the code serves."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from fastapi.testclient import TestClient

from workflows.roles import ROLES

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
#: The Kubernetes version the README names, and that every object is validated for.
KUBERNETES_VERSION = "1.32"
#: Environment variables whose values are secrets: only ever read from a Secret.
SECRET_NAMES = re.compile(r"KEY|SECRET|TOKEN|PASSWORD|DB_URL")


@pytest.fixture(scope="module")
def rendered() -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the Kubernetes manifests were not rendered")
    out = subprocess.run(
        [kubectl, "kustomize", str(REPO / "deploy" / "kubernetes")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def one(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def container(objects: list[dict[str, Any]], deployment: str) -> dict[str, Any]:
    containers = one(objects, "Deployment", deployment)["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def env_of(objects: list[dict[str, Any]], deployment: str) -> dict[str, Any]:
    """The container's variables: its own `env` over the ConfigMaps it reads whole."""
    c = container(objects, deployment)
    values: dict[str, Any] = {}
    for source in c.get("envFrom", []):
        ref = source["configMapRef"]["name"]
        values.update(one(objects, "ConfigMap", ref)["data"])
    for var in c.get("env", []):
        values[var["name"]] = var.get("value", var.get("valueFrom"))
    return values


def test_the_root_renders_the_whole_deployment(rendered: list[dict[str, Any]]) -> None:
    kinds = {(o["kind"], o["metadata"]["name"]) for o in rendered}
    assert {
        ("Deployment", "web"),
        ("Service", "web"),
        ("Ingress", "web"),
        ("Deployment", "worker"),
        ("ScaledObject", "worker"),
        ("PodDisruptionBudget", "web"),
        ("PodDisruptionBudget", "worker"),
        ("PersistentVolumeClaim", "research-data"),
    } <= kinds
    assert any(kind == "NetworkPolicy" for kind, _ in kinds)
    assert all(
        o["metadata"].get("namespace") == "deep-research"
        for o in rendered
        if o["kind"] != "Namespace"
    )


def test_every_object_is_valid_for_the_kubernetes_version_the_readme_names(
    rendered: list[dict[str, Any]],
) -> None:
    assert f"Kubernetes {KUBERNETES_VERSION}" in (REPO / "README.md").read_text()
    keda = json.loads((HERE / "keda_scaledobject.schema.json").read_text())
    for obj in rendered:
        if obj["apiVersion"].startswith("keda.sh/"):
            jsonschema.validate(obj, keda)
        else:
            kubernetes_validate.validate(obj, f"{KUBERNETES_VERSION}.0", strict=True)


def test_the_keda_schema_refuses_what_keda_would_refuse(rendered: list[dict[str, Any]]) -> None:
    """The vendored schema is not a rubber stamp: a misspelt field or a trigger with no task queue fails."""
    keda = json.loads((HERE / "keda_scaledobject.schema.json").read_text())
    scaled = one(rendered, "ScaledObject", "worker")
    misspelt = {**scaled, "spec": {**scaled["spec"], "maxReplicas": 5}}
    trigger = scaled["spec"]["triggers"][0]
    no_queue = {
        **scaled,
        "spec": {
            **scaled["spec"],
            "triggers": [{**trigger, "metadata": {"endpoint": "temporal:7233"}}],
        },
    }
    misspelt_metadata = {
        **scaled,
        "spec": {
            **scaled["spec"],
            "triggers": [{**trigger, "metadata": {**trigger["metadata"], "taskqueue": "x"}}],
        },
    }
    for wrong in (misspelt, no_queue, misspelt_metadata):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, keda)


def test_workers_scale_on_the_task_queue_they_poll(rendered: list[dict[str, Any]]) -> None:
    scaled = one(rendered, "ScaledObject", "worker")["spec"]
    env = env_of(rendered, "worker")
    assert scaled["scaleTargetRef"]["name"] == "worker"
    # KEDA owns the count: a count in the Deployment would reset it at every `kubectl apply`.
    assert "replicas" not in one(rendered, "Deployment", "worker")["spec"]
    assert 1 <= scaled["minReplicaCount"] < scaled["maxReplicaCount"]
    (trigger,) = scaled["triggers"]
    assert trigger["type"] == "temporal"
    assert trigger["metadata"]["taskQueue"] == env["TEMPORAL_TASK_QUEUE"]
    assert trigger["metadata"]["endpoint"] == env["TEMPORAL_ADDRESS"]
    assert trigger["metadata"]["namespace"] == env["TEMPORAL_NAMESPACE"]


def test_a_worker_is_given_longer_than_its_longest_activity_to_stop(
    rendered: list[dict[str, Any]],
) -> None:
    longest = max(role.timeout.total_seconds() for role in ROLES)
    assert longest == 3660  # an LLM call: the hour a deployment may allow it, plus a minute
    drain = float(env_of(rendered, "worker")["WORKER_SHUTDOWN_GRACE_S"])
    pod = one(rendered, "Deployment", "worker")["spec"]["template"]["spec"]
    assert longest <= drain < pod["terminationGracePeriodSeconds"]


def test_the_web_app_runs_more_than_one_replica_and_disruptions_keep_one(
    rendered: list[dict[str, Any]],
) -> None:
    assert one(rendered, "Deployment", "web")["spec"]["replicas"] >= 2
    assert one(rendered, "PodDisruptionBudget", "web")["spec"]["minAvailable"] >= 1
    assert one(rendered, "PodDisruptionBudget", "worker")["spec"]["maxUnavailable"] == 1


def test_secrets_are_only_referenced(rendered: list[dict[str, Any]]) -> None:
    assert not [o for o in rendered if o["kind"] == "Secret"]
    for cm in (o for o in rendered if o["kind"] == "ConfigMap"):
        assert not [k for k in cm["data"] if SECRET_NAMES.search(k)], cm["metadata"]["name"]
    for name in ("web", "worker"):
        for var in container(rendered, name).get("env", []):
            if SECRET_NAMES.search(var["name"]) and "GRACE" not in var["name"]:
                assert "value" not in var, f"{name}: {var['name']} has a literal value"
                assert var["valueFrom"]["secretKeyRef"]["name"] == "deep-research"


def test_every_container_has_requests_and_limits(rendered: list[dict[str, Any]]) -> None:
    for name in ("web", "worker"):
        resources = container(rendered, name)["resources"]
        assert set(resources["requests"]) == set(resources["limits"]) == {"cpu", "memory"}


def test_the_worker_probes_ask_the_health_endpoint_it_serves(
    rendered: list[dict[str, Any]],
) -> None:
    c = container(rendered, "worker")
    port = int(env_of(rendered, "worker")["WORKER_METRICS_PORT"])
    named = {p["name"]: p["containerPort"] for p in c["ports"]}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = c[probe]["httpGet"]
        assert get["path"] == "/healthz"
        assert named[get["port"]] == port


def test_the_web_probes_ask_a_route_the_app_serves_without_sign_in(
    rendered: list[dict[str, Any]],
) -> None:
    from settings import Settings
    from starter.web.app import create_app

    app = create_app(Settings(research_api_tokens="alice:" + "a" * 20))
    c = container(rendered, "web")
    assert c["command"][-2:] == ["--port", str(c["ports"][0]["containerPort"])]
    paths = {
        c[probe]["httpGet"]["path"] for probe in ("startupProbe", "readinessProbe", "livenessProbe")
    }
    with TestClient(app) as client:  # no Authorization header: the kubelet sends none
        for path in paths:
            assert client.get(path).status_code == 200, path


def test_network_policies_name_ports_the_pods_have(rendered: list[dict[str, Any]]) -> None:
    for policy in (o for o in rendered if o["kind"] == "NetworkPolicy"):
        component = (
            policy["spec"]["podSelector"].get("matchLabels", {}).get("app.kubernetes.io/component")
        )
        if component is None:
            assert policy["spec"]["policyTypes"] == ["Ingress"]  # the default deny
            continue
        names = {p["name"] for p in container(rendered, component)["ports"]}
        for rule in policy["spec"].get("ingress", []):
            assert {p["port"] for p in rule["ports"]} <= names


def test_only_the_research_pods_and_keda_reach_the_temporal_frontend(
    rendered: list[dict[str, Any]],
) -> None:
    """Whoever reaches Temporal's frontend reads and ends every user's research; the
    example policy for Temporal's namespace (deploy/kubernetes/temporal) admits to 7233 the web
    app's and the workers' pods as the deployment labels them, KEDA and Temporal's own pods."""
    out = subprocess.run(
        [
            str(shutil.which("kubectl")),
            "kustomize",
            str(REPO / "deploy" / "kubernetes" / "temporal"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    (policy,) = [doc for doc in yaml.safe_load_all(out.stdout) if doc]
    kubernetes_validate.validate(policy, f"{KUBERNETES_VERSION}.0", strict=True)
    host = str(env_of(rendered, "worker")["TEMPORAL_ADDRESS"]).split(":")[0]
    assert (
        policy["kind"] == "NetworkPolicy" and host.split(".")[1] == policy["metadata"]["namespace"]
    )
    same_namespace, outside = policy["spec"]["ingress"]
    assert same_namespace == {"from": [{"podSelector": {}}]}
    assert outside["ports"] == [{"port": 7233, "protocol": "TCP"}]
    research, keda = outside["from"]
    namespace = research["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
    assert namespace == one(rendered, "Deployment", "web")["metadata"]["namespace"]
    admitted = {e["key"]: set(e["values"]) for e in research["podSelector"]["matchExpressions"]}
    for name in ("web", "worker"):
        labels = one(rendered, "Deployment", name)["spec"]["template"]["metadata"]["labels"]
        assert all(labels.get(key) in values for key, values in admitted.items()), name
    assert admitted["app.kubernetes.io/component"] == {"web", "worker"}
    assert keda == {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "keda"}}}


def test_the_identity_providers_client_secret_reaches_the_web_app_from_the_secret(
    rendered: list[dict[str, Any]],
) -> None:
    found = env_of(rendered, "web")["RESEARCH_OIDC_CLIENT_SECRET"]
    assert found == {
        "secretKeyRef": {
            "name": "deep-research",
            "key": "RESEARCH_OIDC_CLIENT_SECRET",
            "optional": True,  # a team signing in with tokens has none
        }
    }
    assert "RESEARCH_OIDC_CLIENT_SECRET" not in env_of(rendered, "worker")
