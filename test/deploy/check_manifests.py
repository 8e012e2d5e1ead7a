#!/usr/bin/env python3
"""Checks deploy/ against the code: names, ports, probe paths, config keys.

Usage: check_manifests.py ROOT            check ROOT/deploy
       check_manifests.py ROOT --selftest  break the manifests in memory, one
                                           mutation at a time, and require
                                           that the named check catches each

What it checks (each failure names the file, the object and the check):
- every YAML file under deploy/ parses;
- names: Service selectors, workload selectors and pod labels; the
  StatefulSet's serviceName is a headless Service that publishes not-ready
  addresses; serviceAccountName, RoleBinding roleRef and subjects; every
  secretKeyRef's Secret and key (the example Secret); kustomization
  resources, the image name, the example Secret kept out of it;
- ports: the named container ports equal the code's defaults (cluster.port
  and management.port from docs/reference/configuration.md, the demo's from
  the contract below) and the TROUPE_*_PORT values, Service ports and
  targetPorts, the store URL;
- probes: every httpGet path of a node is one the management router serves
  (the path literals of management/core/troupe/management/router.cpp);
  readiness is /ready and liveness /alive; the store's probe a store path;
- env: every TROUPE_* variable is the env form of a documented key
  (docs/reference/configuration.md) or of a key the demo contract names
  (CONTRACT_KEYS, for keys not yet in the reference); $(VAR) references
  name variables defined before them; POD_NAME and POD_NAMESPACE come from
  the downward API, and so does TROUPE_CLUSTER__APP_VERSION, from the pod
  template's troupe.io/app-version annotation, a valid app version (ADR
  0009); TROUPE_CLUSTER__HOST is the pod's DNS name under the headless
  Service; enableServiceLinks is off where TROUPE_* variables are read
  (Kubernetes' service variables TROUPE_DEMO_STORE_* would be unknown keys);
- the formation (issue 24): Cluster Bootstrap by kubernetes_api and no
  static seed nodes; the pod label selector (equality requirements) selects
  the node pods and no other workload's; the node has a container port
  named as cluster.bootstrap.kubernetes_api.pod_port_name, the management
  port; required_contact_point_nr is a majority of the replicas and at most
  all of them;
- what issue 9 asks: lease_majority, the kubernetes lease backend,
  singleton.use_lease and sharding.use_lease; a Role with get, create and
  update (and nothing else) on coordination.k8s.io leases, and list (and
  nothing else) on pods of the core group; no namespace in any manifest;
- terminationGracePeriodSeconds is at least the coordinated shutdown's
  longest (the sum of the coordinated_shutdown.<phase>.timeout defaults
  from the reference, or the manifest's TROUPE_* values) plus
  EXIT_MARGIN_S, and the guide docs/guides/kubernetes.md states the sum
  and the period.
"""

import copy
import os
import re
import sys

import yaml

# Keys the contract of issue 9 (demo-contract.md) names that may not be in
# docs/reference/configuration.md yet: the management module's (being added)
# and the demo node's own module. Defaults as the contract states them; a
# key present in the reference is taken from there.
CONTRACT_KEYS = {
    "management.enabled": "true",
    "management.bind": "127.0.0.1",
    "management.port": "8558",
    "management.token": "",
    "management.query_timeout": "2s",
    "management.max_connections": "64",
    "demo.store_url": "http://127.0.0.1:7070",
    "demo.api_bind": "127.0.0.1",
    "demo.api_port": "8080",
    "demo.tick_interval": "500ms",
}
# The store is configured by flags (--bind, --port, --dir), not keys.
STORE_PORT = 7070
STORE_PATHS = {"/ledger", "/summary"}  # GET /summary; the rest are POSTs
LEASE_VERBS = {"get", "create", "update"}
POD_VERBS = {"list"}  # the kubernetes_api discovery lists pods by label
SECRET_NAME = "troupe-cluster"
EXAMPLE_SECRET_FILE = "secret.example.yaml"


class Failure(Exception):
    pass


def fail(check, where, message):
    raise Failure(f"[{check}] {where}: {message}")


# -- what the code says ------------------------------------------------------


def parse_duration_s(text):
    m = re.fullmatch(r"(\d+)(ms|s|m|h)", text)
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    n = int(m.group(1))
    return n * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def reference_keys(root):
    """key -> default text, from the reference's table."""
    path = os.path.join(root, "docs/reference/configuration.md")
    keys = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\| `([a-z0-9_.]+)` \| [^|]* \| ([^|]*) \| `(TROUPE_\w+)`",
                         line)
            if m:
                default = m.group(2).strip()
                keys[m.group(1)] = default.strip("`") if default.startswith("`") else ""
    if not keys:
        raise Failure(f"[reference] {path}: no keys found in the table")
    return keys


def env_of_key(key):
    return "TROUPE_" + key.upper().replace(".", "__")


def router_paths(root):
    path = os.path.join(root, "management/core/troupe/management/router.cpp")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    exact = set(re.findall(r'path == "(/[^"]*)"', text))
    prefixes = set(re.findall(r'_prefix = "(/[^"]*)"', text))
    if "/ready" not in exact or "/alive" not in exact:
        raise Failure(f"[probes] {path}: no \"/ready\" and \"/alive\" path "
                      f"literals found (found {sorted(exact)})")
    return exact, prefixes


# The phases of the coordinated shutdown, in order
# (runtime/core/troupe/runtime/shutdown_sequence.hpp); each is bounded by
# its `coordinated_shutdown.<phase>.timeout` key.
SHUTDOWN_PHASES = [
    "before_service_unbind", "service_unbind", "service_requests_done",
    "service_stop", "before_cluster_shutdown",
    "cluster_sharding_shutdown_region", "cluster_leave", "cluster_exiting",
    "cluster_exiting_done", "cluster_shutdown", "release_leases",
    "before_actor_system_terminate", "actor_system_terminate",
]

# What the process does after the last phase (destroying the actor system,
# flushing the logs, exiting): the margin the period keeps beyond the sum.
EXIT_MARGIN_S = 10


def grace_terms(root, keys, env=None):
    """The coordinated shutdown of one node at its longest, phase by phase:
    each phase's timeout from the reference's default, or from the
    manifest's TROUPE_* variable when it sets one."""
    env = env or {}
    terms = []
    for phase in SHUTDOWN_PHASES:
        key = f"coordinated_shutdown.{phase}.timeout"
        if key not in keys:
            raise Failure(f"[grace] docs/reference/configuration.md: {key} "
                          f"not found; update SHUTDOWN_PHASES and the "
                          f"guide's arithmetic")
        text = env.get(env_of_key(key), keys[key])
        terms.append((phase, parse_duration_s(text)))
    return terms


# -- the manifests -------------------------------------------------------------


def load_deploy(root):
    """[(relative path, [documents])] for every YAML file under deploy/."""
    files = []
    base = os.path.join(root, "deploy")
    for dirpath, _, names in sorted(os.walk(base)):
        for name in sorted(names):
            if not name.endswith((".yaml", ".yml")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            try:
                with open(path, encoding="utf-8") as f:
                    docs = [d for d in yaml.safe_load_all(f) if d is not None]
            except yaml.YAMLError as e:
                raise Failure(f"[yaml] {rel}: does not parse: {e}")
            files.append((rel, docs))
    if not files:
        raise Failure(f"[yaml] {base}: no YAML files")
    return files


class Model:
    def __init__(self, files):
        self.files = files
        self.objects = []  # (rel, doc) of Kubernetes objects
        for rel, docs in files:
            for d in docs:
                if not isinstance(d, dict):
                    fail("yaml", rel, "a document is not a mapping")
                self.objects.append((rel, d))

    def of_kind(self, kind):
        return [(r, d) for r, d in self.objects if d.get("kind") == kind]

    def named(self, kind, name):
        return [(r, d) for r, d in self.of_kind(kind)
                if d.get("metadata", {}).get("name") == name]

    def workloads(self):
        return self.of_kind("StatefulSet") + self.of_kind("Deployment")


def where(rel, d, extra=""):
    name = d.get("metadata", {}).get("name", "?")
    return f"{rel} {d.get('kind')}/{name}{extra}"


def pod_spec(d):
    return d["spec"]["template"]["spec"]


def pod_labels(d):
    return d["spec"]["template"].get("metadata", {}).get("labels", {}) or {}


def containers(d):
    return pod_spec(d).get("containers", [])


def ports_of(c):
    return {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}


def env_of(c):
    return {e["name"]: e for e in c.get("env", [])}


def is_node(d):
    return d.get("kind") == "StatefulSet"


# -- the checks ----------------------------------------------------------------


def check_names(m, root):
    for rel, d in m.objects:
        if d.get("kind") in ("Kustomization", "Cluster"):
            continue  # kustomize's and kind's own files
        if "kind" not in d or not d.get("metadata", {}).get("name"):
            fail("names", rel, "a document without kind or metadata.name")
        if d.get("metadata", {}).get("namespace"):
            fail("namespace", where(rel, d),
                 "names a namespace; the manifests are namespace-agnostic")
    for rel, d in m.workloads():
        sel = d["spec"].get("selector", {}).get("matchLabels", {})
        labels = pod_labels(d)
        if not sel or any(labels.get(k) != v for k, v in sel.items()):
            fail("selectors", where(rel, d),
                 f"selector {sel} does not match the pod labels {labels}")
        sa = pod_spec(d).get("serviceAccountName")
        if sa and not m.named("ServiceAccount", sa):
            fail("service-account", where(rel, d),
                 f"serviceAccountName {sa!r} is no ServiceAccount under deploy/")
    for rel, d in m.of_kind("Service"):
        sel = d["spec"].get("selector", {})
        matches = [w for w in m.workloads()
                   if sel and all(pod_labels(w[1]).get(k) == v
                                  for k, v in sel.items())]
        if not matches:
            fail("selectors", where(rel, d),
                 f"selector {sel} matches no pod template")
        for p in d["spec"].get("ports", []):
            target = p.get("targetPort", p.get("port"))
            for _, w in matches:
                found = [ports_of(c) for c in containers(w)]
                numbers = {n: v for ps in found for n, v in ps.items()}
                if isinstance(target, str):
                    if target not in numbers:
                        fail("ports", where(rel, d),
                             f"targetPort {target!r} is no container port of "
                             f"{where('', w).strip()} ({sorted(numbers)})")
                    target_number = numbers[target]
                else:
                    target_number = target
                if target_number not in numbers.values():
                    fail("ports", where(rel, d),
                         f"targetPort {target} is no container port")
                if p.get("port") != target_number:
                    fail("ports", where(rel, d),
                         f"port {p.get('port')} differs from its target "
                         f"{target_number}")
    for rel, d in m.of_kind("StatefulSet"):
        svc = m.named("Service", d["spec"].get("serviceName"))
        if not svc:
            fail("headless-service", where(rel, d),
                 f"serviceName {d['spec'].get('serviceName')!r} is no Service")
        spec = svc[0][1]["spec"]
        if spec.get("clusterIP") != "None":
            fail("headless-service", where(*svc[0]), "is not headless "
                 "(clusterIP: None): the pods would get no DNS names")
        if spec.get("publishNotReadyAddresses") is not True:
            fail("headless-service", where(*svc[0]),
                 "publishNotReadyAddresses is not true: the members' names would "
                 "not resolve before the pods are ready, which needs a cluster")
    for rel, d in m.of_kind("PodDisruptionBudget"):
        sel = d["spec"].get("selector", {}).get("matchLabels", {})
        if not any(all(pod_labels(w).get(k) == v for k, v in sel.items())
                   for _, w in m.workloads()):
            fail("selectors", where(rel, d), f"selector {sel} matches no pod")


def check_rbac(m, root):
    roles = m.of_kind("Role")
    for rel, d in m.of_kind("RoleBinding"):
        ref = d.get("roleRef", {})
        if ref.get("kind") != "Role" or not m.named("Role", ref.get("name")):
            fail("rbac", where(rel, d), f"roleRef {ref} is no Role under deploy/")
        if ref.get("apiGroup") != "rbac.authorization.k8s.io":
            fail("rbac", where(rel, d), "roleRef.apiGroup is not "
                 "rbac.authorization.k8s.io")
        for s in d.get("subjects", []):
            if s.get("kind") != "ServiceAccount" or not m.named(
                    "ServiceAccount", s.get("name")):
                fail("rbac", where(rel, d),
                     f"subject {s} is no ServiceAccount under deploy/")
            if s.get("namespace"):
                fail("namespace", where(rel, d), "a subject names a namespace")
    users = {pod_spec(w).get("serviceAccountName") for _, w in m.of_kind("StatefulSet")}
    bound = {s.get("name") for _, d in m.of_kind("RoleBinding")
             for s in d.get("subjects", [])}
    for sa in users:
        if sa not in bound:
            fail("rbac", f"ServiceAccount/{sa}", "is bound to no Role")
    for group, resource, verbs, user in (
            ("coordination.k8s.io", "leases", LEASE_VERBS, "the lease backend"),
            ("", "pods", POD_VERBS, "the kubernetes_api bootstrap discovery")):
        granted = set()
        for rel, d in roles:
            for rule in d.get("rules", []):
                if group in rule.get("apiGroups", []) and \
                        resource in rule.get("resources", []):
                    granted |= set(rule.get("verbs", []))
                    extra = set(rule.get("verbs", [])) - verbs
                    if extra:
                        fail("rbac", where(rel, d),
                             f"grants {sorted(extra)} on {resource}; {user} "
                             f"uses only {sorted(verbs)}")
        if not verbs <= granted:
            fail("rbac", "Role", f"{resource} need {sorted(verbs)} in API "
                 f"group {group!r} ({user}), granted {sorted(granted)}")


def check_secrets(m, root):
    example = [(r, d) for r, d in m.of_kind("Secret")
               if r.endswith(EXAMPLE_SECRET_FILE)]
    if not example:
        fail("secrets", f"deploy/kubernetes/{EXAMPLE_SECRET_FILE}",
             "no example Secret")
    secrets = {}
    for rel, d in example:
        keys = set((d.get("stringData") or {}).keys()) | set(
            (d.get("data") or {}).keys())
        secrets[d["metadata"]["name"]] = keys
        for k, v in (d.get("stringData") or {}).items():
            if "PLACEHOLDER" not in str(v):
                fail("secrets", where(rel, d),
                     f"{k} is not an obvious placeholder (PLACEHOLDER...)")
    for rel, d in m.workloads():
        for c in containers(d):
            for e in c.get("env", []):
                ref = (e.get("valueFrom") or {}).get("secretKeyRef")
                if not ref:
                    continue
                if ref.get("name") not in secrets:
                    fail("secrets", where(rel, d, f" env {e['name']}"),
                         f"Secret {ref.get('name')!r} is not the example's "
                         f"({sorted(secrets)})")
                if ref.get("key") not in secrets[ref["name"]]:
                    fail("secrets", where(rel, d, f" env {e['name']}"),
                         f"key {ref.get('key')!r} is not in Secret "
                         f"{ref['name']} ({sorted(secrets[ref['name']])})")


def check_kustomization(m, root):
    ks = [(r, d) for r, d in m.objects if d.get("kind") == "Kustomization"]
    if len(ks) != 1:
        fail("kustomization", "deploy/", f"{len(ks)} kustomization.yaml files")
    rel, k = ks[0]
    base = os.path.dirname(rel)
    listed = set(k.get("resources", []))
    for r in listed:
        if not os.path.isfile(os.path.join(root, base, r)):
            fail("kustomization", rel, f"resource {r} does not exist")
    if EXAMPLE_SECRET_FILE in listed:
        fail("kustomization", rel, f"lists {EXAMPLE_SECRET_FILE}: its "
             "placeholder secret would be applied")
    for frel, docs in m.files:
        name = os.path.basename(frel)
        if os.path.dirname(frel) == base and name not in listed | {
                "kustomization.yaml", EXAMPLE_SECRET_FILE}:
            fail("kustomization", rel, f"does not list {name}")
    images = {i.get("name") for i in k.get("images", [])}
    for wrel, d in m.workloads():
        for c in containers(d):
            if c.get("image", "").split(":")[0] not in images:
                fail("kustomization", where(wrel, d),
                     f"image {c.get('image')!r} is not in the images "
                     f"of {rel} ({sorted(images)})")


def check_dockerfile(m, root):
    path = os.path.join(root, "deploy/Dockerfile")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = text.replace("\\\n", " ")  # continuation lines
    installed = set()
    for line in text.splitlines():
        if line.startswith("COPY --from=build"):
            installed |= set(re.findall(r"/(troupe-[\w-]+)", line))
    built = " ".join(l for l in text.splitlines() if "--target" in l)
    for name in ("troupe-demo-node", "troupe-demo-store"):
        if name not in built or name not in installed:
            fail("image", "deploy/Dockerfile", f"does not build and install "
                 f"{name} (cmake --build ... --target, COPY --from=build)")
    users = re.findall(r"^USER (\d+)", text, re.M)
    if not users or users[-1] == "0":
        fail("image", "deploy/Dockerfile", "the runtime stage does not run "
             "as a numeric non-root USER")
    for rel, d in m.workloads():
        sc = pod_spec(d).get("securityContext", {})
        if sc.get("runAsNonRoot") is not True or str(
                sc.get("runAsUser")) != users[-1]:
            fail("image", where(rel, d), f"securityContext does not run as "
                 f"non-root user {users[-1]} (the image's USER)")
        for c in containers(d):
            cmd = (c.get("command") or [""])[0]
            if not cmd.startswith("/usr/local/bin/") or \
                    cmd.rsplit("/", 1)[1] not in installed:
                fail("image", where(rel, d), f"command {cmd!r} is not a "
                     f"binary the image installs ({sorted(installed)})")


def check_ports_and_env(m, root, keys):
    def default(key):
        return keys.get(key, CONTRACT_KEYS.get(key))

    expected_ports = {
        "cluster": int(default("cluster.port")),
        "management": int(default("management.port")),
        "api": int(default("demo.api_port")),
        "store": STORE_PORT,
    }
    env_port_key = {"cluster": "TROUPE_CLUSTER__PORT",
                    "management": "TROUPE_MANAGEMENT__PORT",
                    "api": "TROUPE_DEMO__API_PORT"}
    documented = {env_of_key(k): k for k in keys}
    allowed = dict(documented)
    allowed.update({env_of_key(k): k for k in CONTRACT_KEYS})
    exact_paths, prefixes = router_paths(root)
    for rel, d in m.workloads():
        uses_troupe = False
        for c in containers(d):
            w = where(rel, d, f" container {c.get('name')}")
            ports = ports_of(c)
            for name, number in ports.items():
                if name not in expected_ports:
                    fail("ports", w, f"container port {name!r} is not one of "
                         f"{sorted(expected_ports)}")
                if number != expected_ports[name]:
                    fail("ports", w, f"container port {name} is {number}, the "
                         f"code's default is {expected_ports[name]}")
            env = env_of(c)
            defined = []
            for e in c.get("env", []):
                name = e["name"]
                value = e.get("value")
                if value is not None:
                    for ref in re.findall(r"\$\((\w+)\)", str(value)):
                        if ref not in defined:
                            fail("env", w, f"{name} refers to $({ref}), which "
                                 "is not defined before it (Kubernetes expands "
                                 "only earlier variables)")
                defined.append(name)
                if not name.startswith("TROUPE_"):
                    continue
                uses_troupe = True
                if name not in allowed:
                    fail("env", w, f"{name} is no documented key "
                         "(docs/reference/configuration.md) nor a contract key")
            for name, env_name in env_port_key.items():
                if name in ports and env_name in env and \
                        str(env[env_name].get("value")) != str(ports[name]):
                    fail("ports", w, f"{env_name}={env[env_name].get('value')} "
                         f"but the container port {name} is {ports[name]}")
            for probe_kind in ("readinessProbe", "livenessProbe", "startupProbe"):
                probe = c.get(probe_kind)
                if not probe or "httpGet" not in probe:
                    continue
                path = probe["httpGet"].get("path", "/")
                port = probe["httpGet"].get("port")
                if is_node(d):
                    served = path in exact_paths or any(
                        path.startswith(p) for p in prefixes)
                    if not served:
                        fail("probes", w, f"{probe_kind} path {path} is not "
                             f"served by the management router "
                             f"({sorted(exact_paths)})")
                    want = {"readinessProbe": "/ready",
                            "livenessProbe": "/alive"}.get(probe_kind)
                    if want and path != want:
                        fail("probes", w, f"{probe_kind} is {path}, must be "
                             f"{want} (/alive never depends on cluster state)")
                    if port not in ("management", expected_ports["management"]):
                        fail("probes", w, f"{probe_kind} port {port} is not "
                             "the management port")
                elif path not in STORE_PATHS:
                    fail("probes", w, f"{probe_kind} path {path} is not a "
                         f"store path ({sorted(STORE_PATHS)})")
        if uses_troupe and pod_spec(d).get("enableServiceLinks") is not False:
            fail("env", where(rel, d), "enableServiceLinks is not false: "
                 "Kubernetes would set TROUPE_DEMO_STORE_SERVICE_HOST and "
                 "friends, unknown keys that stop the node at start")
        if is_node(d):
            check_node_env(rel, d, m, expected_ports)
        else:
            for c in containers(d):
                args = c.get("args", [])
                if "--port" in args and \
                        args[args.index("--port") + 1] != str(STORE_PORT):
                    fail("ports", where(rel, d), "the store's --port is not "
                         f"{STORE_PORT}")


APP_VERSION_ANNOTATION = "troupe.io/app-version"


def check_node_env(rel, d, m, ports):
    c = containers(d)[0]
    w = where(rel, d, f" container {c.get('name')}")
    env = env_of(c)
    app_version = f"metadata.annotations['{APP_VERSION_ANNOTATION}']"
    for name, field in (("POD_NAME", "metadata.name"),
                        ("POD_NAMESPACE", "metadata.namespace"),
                        ("TROUPE_CLUSTER__APP_VERSION", app_version)):
        got = ((env.get(name) or {}).get("valueFrom") or {}).get(
            "fieldRef", {}).get("fieldPath")
        if got != field:
            fail("downward-api", w, f"{name} is not from fieldRef {field}")
    # As cluster.app_version parses it (cluster/core/.../app_version.hpp).
    annotations = d["spec"]["template"]["metadata"].get("annotations") or {}
    version = annotations.get(APP_VERSION_ANNOTATION)
    if not re.fullmatch(r"\d{1,10}(\.\d{1,10}){0,2}(-[A-Za-z0-9._-]+)?",
                        str(version)):
        fail("app-version", where(rel, d), f"the pod template's annotation "
             f"{APP_VERSION_ANNOTATION} is {version!r}, not an app version "
             "such as 1.2.3 (ADR 0009)")
    svc = d["spec"]["serviceName"]
    sts = d["metadata"]["name"]
    suffix = f".{svc}.$(POD_NAMESPACE).svc.cluster.local"
    host = (env.get("TROUPE_CLUSTER__HOST") or {}).get("value")
    if host != f"$(POD_NAME){suffix}":
        fail("env", w, f"TROUPE_CLUSTER__HOST is {host!r}, not the pod's name "
             f"under the headless Service: $(POD_NAME){suffix}")
    check_bootstrap(w, d, m, env, ports)
    want = {
        "TROUPE_LEASE__BACKEND": "kubernetes",
        "TROUPE_DOWNING__ACTIVE_STRATEGY": "lease_majority",
        "TROUPE_SINGLETON__USE_LEASE": "true",
        "TROUPE_SHARDING__USE_LEASE": "true",
        "TROUPE_MANAGEMENT__BIND": "0.0.0.0",
    }
    for name, value in want.items():
        if str((env.get(name) or {}).get("value")) != value:
            fail("env", w, f"{name} must be {value}")
    for name in ("TROUPE_CLUSTER__SECRET", "TROUPE_MANAGEMENT__TOKEN"):
        ref = ((env.get(name) or {}).get("valueFrom") or {}).get("secretKeyRef")
        if not ref or ref.get("name") != SECRET_NAME:
            fail("secrets", w, f"{name} is not from Secret {SECRET_NAME}")
    url = (env.get("TROUPE_DEMO__STORE_URL") or {}).get("value", "")
    mm = re.fullmatch(r"http://([a-z0-9-]+):(\d+)", str(url))
    if not mm or not m.named("Service", mm.group(1)):
        fail("env", w, f"TROUPE_DEMO__STORE_URL {url!r} is not a Service "
             "under deploy/")
    svc_ports = [p.get("port") for p in
                 m.named("Service", mm.group(1))[0][1]["spec"].get("ports", [])]
    if int(mm.group(2)) not in svc_ports:
        fail("ports", w, f"TROUPE_DEMO__STORE_URL's port {mm.group(2)} is not "
             f"a port of Service {mm.group(1)} ({svc_ports})")


BOOTSTRAP = "TROUPE_CLUSTER__BOOTSTRAP__"


def parse_equality_selector(text):
    """{key: value} of a selector of equality requirements (a=b,c==d), or
    None when it has another form."""
    out = {}
    for part in str(text).split(","):
        mm = re.fullmatch(r"\s*([A-Za-z0-9./_-]+)\s*==?\s*([A-Za-z0-9._-]*)\s*",
                          part)
        if not mm:
            return None
        out[mm.group(1)] = mm.group(2)
    return out


def check_bootstrap(w, d, m, env, ports):
    """Issue 24: the cluster forms by kubernetes_api bootstrap."""
    def value(name, default=None):
        e = env.get(BOOTSTRAP + name)
        return str(e.get("value")) if e and "value" in e else default
    if "TROUPE_CLUSTER__SEED_NODES" in env:
        fail("bootstrap", w, "TROUPE_CLUSTER__SEED_NODES is set: no static "
             "seed nodes, the cluster forms by Cluster Bootstrap")
    if value("DISCOVERY_METHOD") != "kubernetes_api":
        fail("bootstrap", w, f"{BOOTSTRAP}DISCOVERY_METHOD is "
             f"{value('DISCOVERY_METHOD')!r}, must be kubernetes_api")
    text = value("KUBERNETES_API__POD_LABEL_SELECTOR", "app=troupe")
    sel = parse_equality_selector(text)
    if not sel:
        fail("bootstrap", w, f"pod label selector {text!r} is not a list of "
             "equality requirements (a=b,c=d)")
    for rel, other in m.workloads():
        selected = all(pod_labels(other).get(k) == v for k, v in sel.items())
        if selected != (other is d):
            fail("bootstrap", w, f"pod label selector {text!r} "
                 f"{'selects' if selected else 'does not select'} the pods "
                 f"of {where(rel, other).strip()}")
    port_name = value("KUBERNETES_API__POD_PORT_NAME", "management")
    own = ports_of(containers(d)[0])
    if own.get(port_name) != ports["management"]:
        fail("bootstrap", w, f"no container port named {port_name!r} with "
             f"the management port {ports['management']} (the contact "
             f"points' port)")
    nr = value("REQUIRED_CONTACT_POINT_NR")
    replicas = d["spec"]["replicas"]
    if nr is None or not nr.isdigit() or not replicas // 2 < int(nr) <= replicas:
        fail("bootstrap", w, f"{BOOTSTRAP}REQUIRED_CONTACT_POINT_NR is "
             f"{nr!r}: it must be a majority of the {replicas} replicas and "
             f"at most all of them (Akka: the initial replica count)")


def pod_env(d):
    """name -> literal value of the first container's env."""
    containers = pod_spec(d).get("containers", [])
    env = containers[0].get("env", []) if containers else []
    return {e["name"]: str(e["value"]) for e in env if "value" in e}


def check_grace(m, root, keys):
    total = None
    for rel, d in m.of_kind("StatefulSet"):
        terms = grace_terms(root, keys, pod_env(d))
        phases = sum(t for _, t in terms)
        total = phases + EXIT_MARGIN_S
        grace = pod_spec(d).get("terminationGracePeriodSeconds", 30)
        if grace < total:
            detail = " + ".join(f"{t:g}s {n}" for n, t in terms if t)
            fail("grace", where(rel, d), f"terminationGracePeriodSeconds "
                 f"{grace} < {total:g} = {detail} + {EXIT_MARGIN_S}s to "
                 f"exit")
        guide = os.path.join(root, "docs/guides/kubernetes.md")
        with open(guide, encoding="utf-8") as f:
            text = f.read()
        for n in (phases, grace):
            if not re.search(rf"\b{n:g}\s?s\b", text):
                fail("grace", "docs/guides/kubernetes.md",
                     f"does not state {n:g}s (the phases' sum {phases:g}s, "
                     f"the period "
                     f"{grace}s)")
    return total


CHECKS = [
    ("names", lambda m, root, keys: check_names(m, root)),
    ("rbac", lambda m, root, keys: check_rbac(m, root)),
    ("secrets", lambda m, root, keys: check_secrets(m, root)),
    ("kustomization", lambda m, root, keys: check_kustomization(m, root)),
    ("image", lambda m, root, keys: check_dockerfile(m, root)),
    ("ports-env-probes", check_ports_and_env),
    ("grace", check_grace),
]


def run_checks(files, root, keys):
    m = Model(files)
    for _, check in CHECKS:
        check(m, root, keys)


# -- selftest: each mutation must be caught by the check it names ------------


def node(files):
    for rel, docs in files:
        for d in docs:
            if d.get("kind") == "StatefulSet":
                return d
    raise Failure("[selftest] no StatefulSet")


def first(files, kind):
    for rel, docs in files:
        for d in docs:
            if d.get("kind") == kind:
                return d
    raise Failure(f"[selftest] no {kind}")


def node_env(files, name):
    for e in containers(node(files))[0]["env"]:
        if e["name"] == name:
            return e
    raise Failure(f"[selftest] no env {name}")


def probe(files, kind):
    return containers(node(files))[0][kind]["httpGet"]


MUTATIONS = [
    ("readiness probe path /readyz", "probes",
     lambda f: probe(f, "readinessProbe").update(path="/readyz")),
    ("liveness probe on /ready", "probes",
     lambda f: probe(f, "livenessProbe").update(path="/ready")),
    ("management container port 8559", "ports",
     lambda f: containers(node(f))[0]["ports"][1].update(containerPort=8559)),
    ("cluster port env 2553", "ports",
     lambda f: node_env(f, "TROUPE_CLUSTER__PORT").update(value="2553")),
    ("headless Service selects component=nodes", "selectors",
     lambda f: first(f, "Service")["spec"]["selector"].update(
         {"app.kubernetes.io/component": "nodes"})),
    ("serviceAccountName troupe-sa", "service-account",
     lambda f: pod_spec(node(f)).update(serviceAccountName="troupe-sa")),
    ("RoleBinding's roleRef names troupe-leases", "rbac",
     lambda f: first(f, "RoleBinding")["roleRef"].update(name="troupe-leases")),
    ("Role without update", "rbac",
     lambda f: first(f, "Role")["rules"][0].update(verbs=["get", "create"])),
    ("Role with list and watch", "rbac",
     lambda f: first(f, "Role")["rules"][0]["verbs"].extend(["list", "watch"])),
    ("secretKeyRef key cluster-secret", "secrets",
     lambda f: node_env(f, "TROUPE_CLUSTER__SECRET")["valueFrom"]
     ["secretKeyRef"].update(key="cluster-secret")),
    ("env TROUPE_CLUSTER__BOOTSTRAP__METHOD (no such key)", "env",
     lambda f: node_env(f, "TROUPE_CLUSTER__BOOTSTRAP__DISCOVERY_METHOD")
     .update(name="TROUPE_CLUSTER__BOOTSTRAP__METHOD")),
    ("static seed nodes back", "bootstrap",
     lambda f: containers(node(f))[0]["env"].append(
         {"name": "TROUPE_CLUSTER__SEED_NODES",
          "value": "troupe-0.troupe.$(POD_NAMESPACE).svc.cluster.local:2552"})),
    ("discovery method dns", "bootstrap",
     lambda f: node_env(f, "TROUPE_CLUSTER__BOOTSTRAP__DISCOVERY_METHOD")
     .update(value="dns")),
    ("pod label selector that also selects the store", "bootstrap",
     lambda f: node_env(
         f, "TROUPE_CLUSTER__BOOTSTRAP__KUBERNETES_API__POD_LABEL_SELECTOR")
     .update(value="app.kubernetes.io/name=troupe")),
    ("pod label selector that selects no pod", "bootstrap",
     lambda f: node_env(
         f, "TROUPE_CLUSTER__BOOTSTRAP__KUBERNETES_API__POD_LABEL_SELECTOR")
     .update(value="app=troupe")),
    ("pod port name mgmt", "bootstrap",
     lambda f: containers(node(f))[0]["env"].append(
         {"name": "TROUPE_CLUSTER__BOOTSTRAP__KUBERNETES_API__POD_PORT_NAME",
          "value": "mgmt"})),
    ("required_contact_point_nr 1 of 3", "bootstrap",
     lambda f: node_env(f, "TROUPE_CLUSTER__BOOTSTRAP__REQUIRED_CONTACT_POINT_NR")
     .update(value="1")),
    ("required_contact_point_nr 4 of 3", "bootstrap",
     lambda f: node_env(f, "TROUPE_CLUSTER__BOOTSTRAP__REQUIRED_CONTACT_POINT_NR")
     .update(value="4")),
    ("Role without list on pods", "rbac",
     lambda f: first(f, "Role")["rules"].pop(1)),
    ("Role with watch on pods", "rbac",
     lambda f: first(f, "Role")["rules"][1]["verbs"].append("watch")),
    ("enableServiceLinks dropped", "env",
     lambda f: pod_spec(node(f)).pop("enableServiceLinks")),
    ("downing keep_majority", "env",
     lambda f: node_env(f, "TROUPE_DOWNING__ACTIVE_STRATEGY").update(
         value="keep_majority")),
    ("POD_NAME from spec.nodeName", "downward-api",
     lambda f: node_env(f, "POD_NAME")["valueFrom"]["fieldRef"].update(
         fieldPath="spec.nodeName")),
    ("app version from the label app.kubernetes.io/version", "downward-api",
     lambda f: node_env(f, "TROUPE_CLUSTER__APP_VERSION")["valueFrom"]
     ["fieldRef"].update(
         fieldPath="metadata.labels['app.kubernetes.io/version']")),
    ("app version annotation v1.0", "app-version",
     lambda f: node(f)["spec"]["template"]["metadata"]["annotations"].update(
         {"troupe.io/app-version": "v1.0"})),
    ("terminationGracePeriodSeconds 30", "grace",
     lambda f: pod_spec(node(f)).update(terminationGracePeriodSeconds=30)),
    ("a phase timeout raised past the period", "grace",
     lambda f: containers(node(f))[0]["env"].append(
         {"name": "TROUPE_COORDINATED_SHUTDOWN__CLUSTER_EXITING__TIMEOUT",
          "value": "60s"})),
    ("headless Service without publishNotReadyAddresses", "headless-service",
     lambda f: first(f, "Service")["spec"].pop("publishNotReadyAddresses")),
    ("a namespace in the ServiceAccount", "namespace",
     lambda f: first(f, "ServiceAccount")["metadata"].update(namespace="prod")),
    ("store URL to troupe-store", "env",
     lambda f: node_env(f, "TROUPE_DEMO__STORE_URL").update(
         value="http://troupe-store:7070")),
]


def selftest(files, root, keys):
    run_checks(files, root, keys)  # the unbroken manifests pass
    for what, check, mutate in MUTATIONS:
        broken = copy.deepcopy(files)
        mutate(broken)
        try:
            run_checks(broken, root, keys)
        except Failure as e:
            if not str(e).startswith(f"[{check}]"):
                raise Failure(f"[selftest] {what}: caught by the wrong check, "
                              f"expected [{check}]: {e}")
            print(f"selftest: {what}: caught: {e}")
            continue
        raise Failure(f"[selftest] {what}: not caught (expected [{check}])")
    print(f"selftest: all {len(MUTATIONS)} mutations caught")


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    root = argv[1]
    try:
        keys = reference_keys(root)
        for k, v in CONTRACT_KEYS.items():
            keys.setdefault(k, v)
        files = load_deploy(root)
        if "--selftest" in argv:
            selftest(files, root, keys)
        else:
            run_checks(files, root, keys)
            total = sum(t for _, t in grace_terms(root, keys)) + EXIT_MARGIN_S
            n = sum(len(docs) for _, docs in files)
            print(f"check_manifests: {len(files)} files, {n} documents: names, "
                  f"ports, probes, env keys, bootstrap, RBAC and the grace period "
                  f"(>= {total}s) match the code")
    except Failure as e:
        print(f"check_manifests: FAIL {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
