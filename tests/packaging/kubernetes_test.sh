#!/usr/bin/env bash
# The Kubernetes wiring under packaging/kubernetes/, checked offline with what Debian and npm offer
# (docs/health.md, "Wiring it in"):
#   - yamllint (strict) on every manifest;
#   - every document against its Kubernetes schema with the npm package kubernetes-models, which
#     checks types, enums and required fields but accepts misspelt fields — shown below — so
#     validators/validate-k8s.js --strict also walks kubernetes-models' type declarations and
#     refuses a field no type declares;
#   - Node Problem Detector's custom-plugin config against a JSON Schema of our own
#     (validators/npd-custom-plugin.schema.json, written from NPD's Go types) with ajv-cli, plus
#     the cross-field rules NPD enforces at start;
#   - what the manifests ask our programs to do: the DaemonSet's configuration passes
#     `neuron-monitord --check-config`, its command, probes and mounts agree with it, and the NPD
#     rule's command line runs `neuron-ls --check` against a daemon, with NPD's exit-code contract.
#   kubernetes_test.sh BUILD_DIR SOURCE_DIR
source "$(dirname "$0")/common.sh"
build=$1 source_dir=$2
k8s=$source_dir/packaging/kubernetes
validators=$source_dir/tests/packaging/validators
# Where packaging/install-deps.sh test put the validators from npm.
if [ "$(id -u)" -eq 0 ]; then
  prefix=${NEURONMON_NPM_PREFIX:-/var/cache/neuronmon-test/npm}
else
  prefix=${NEURONMON_NPM_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/neuronmon-test/npm}
fi
daemon=$build/daemon/neuron-monitord
ls_bin=$build/exporter/neuron-ls

command -v yamllint >/dev/null || nm_fail "yamllint is missing: run packaging/install-deps.sh test"
command -v node >/dev/null || nm_fail "node is missing: run packaging/install-deps.sh test"
[ -x "$prefix/node_modules/.bin/ajv" ] && [ -d "$prefix/node_modules/kubernetes-models" ] ||
  nm_fail "the npm validators are not in $prefix: run packaging/install-deps.sh test"
export NODE_PATH=$prefix/node_modules
ajv=$prefix/node_modules/.bin/ajv
schema=$validators/npd-custom-plugin.schema.json
npd_json=$k8s/node-problem-detector/neuron-health.json
npd_configmap=$k8s/node-problem-detector/neuron-health-configmap.yaml
daemonset=$k8s/neuron-monitord.yaml

# expect_status WANT DESCRIPTION COMMAND...: runs COMMAND, output in $nm_tmp/out.
expect_status() {
  local want=$1 what=$2 got=0
  shift 2
  "$@" >"$nm_tmp/out" 2>&1 || got=$?
  [ "$got" = "$want" ] || { cat "$nm_tmp/out" >&2; nm_fail "$what: exit $got, want $want"; }
}

# --- YAML style -----------------------------------------------------------------------------------
expect_status 0 "yamllint" yamllint -s \
  -d '{extends: default, rules: {line-length: {max: 100}}}' "$k8s"

# --- Kubernetes schemas ---------------------------------------------------------------------------
expect_status 0 "kubernetes-models --strict" node "$validators/validate-k8s.js" --strict \
  "$daemonset" "$npd_configmap"
grep -q 'apps/v1/DaemonSet "neuron-monitord": OK' "$nm_tmp/out" || nm_fail "no DaemonSet checked"
# A wrong type fails kubernetes-models itself ...
sed 's/containerPort: 9413/containerPort: "metrics"/' "$daemonset" >"$nm_tmp/bad-type.yaml"
expect_status 1 "a string containerPort" node "$validators/validate-k8s.js" "$nm_tmp/bad-type.yaml"
grep -q 'containerPort: must be integer' "$nm_tmp/out" || nm_fail "$(cat "$nm_tmp/out")"
# ... a misspelt field does not (kubernetes-models' schemas allow unknown fields); --strict does.
sed 's/imagePullPolicy: IfNotPresent/imagePullPolicyy: IfNotPresent/' "$daemonset" \
  >"$nm_tmp/misspelt.yaml"
expect_status 0 "kubernetes-models alone misses a misspelt field" \
  node "$validators/validate-k8s.js" "$nm_tmp/misspelt.yaml"
expect_status 1 "--strict finds a misspelt field" \
  node "$validators/validate-k8s.js" --strict "$nm_tmp/misspelt.yaml"
grep -q 'unknown field "imagePullPolicyy" (did you mean "imagePullPolicy"?)' "$nm_tmp/out" ||
  nm_fail "$(cat "$nm_tmp/out")"

# --- Node Problem Detector's config ---------------------------------------------------------------
expect_status 0 "ajv: neuron-health.json" "$ajv" validate -s "$schema" -d "$npd_json"
sed 's/"invoke_interval"/"invoke_intervall"/' "$npd_json" >"$nm_tmp/misspelt.json"
expect_status 1 "ajv: a misspelt key" "$ajv" validate -s "$schema" -d "$nm_tmp/misspelt.json"
sed 's/"timeout": "20s"/"timeout": "20 seconds"/' "$npd_json" >"$nm_tmp/duration.json"
expect_status 1 "ajv: a duration Go cannot parse" "$ajv" validate -s "$schema" \
  -d "$nm_tmp/duration.json"
sed 's/"type": "permanent"/"type": "sometimes"/' "$npd_json" >"$nm_tmp/type.json"
expect_status 1 "ajv: an unknown rule type" "$ajv" validate -s "$schema" -d "$nm_tmp/type.json"

# What the ConfigMaps hold, as files: $nm_tmp/npd.json and $nm_tmp/daemon.json.
cat >"$nm_tmp/extract.js" <<'JS'
const fs = require('fs');
const YAML = require('yaml');
const [file, kind, key, out] = process.argv.slice(2);
for (const doc of YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'), {version: '1.1'})) {
  const o = doc.toJS();
  if (o && o.kind === kind) {
    if (kind === 'ConfigMap') fs.writeFileSync(out, o.data[key]);
    else fs.writeFileSync(out, JSON.stringify(o));
    process.exit(0);
  }
}
process.exit(1);
JS
node "$nm_tmp/extract.js" "$npd_configmap" ConfigMap neuron-health.json "$nm_tmp/npd.json" ||
  nm_fail "no ConfigMap in $npd_configmap"
cmp -s <(python3 -m json.tool "$npd_json") <(python3 -m json.tool "$nm_tmp/npd.json") ||
  nm_fail "the ConfigMap's neuron-health.json differs from $npd_json"

# The rules NPD checks at start (config.go Validate) that a schema cannot say.
python3 - "$npd_json" <<'PY' || nm_fail "NPD would refuse $npd_json"
import json, re, sys
c = json.load(open(sys.argv[1]))
def seconds(d):
    units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * units[u] for n, u in re.findall(r"([0-9.]+)(ns|us|ms|s|m|h)", d))
conditions = {x["type"] for x in c["conditions"]}
global_timeout = seconds(c.get("pluginConfig", {}).get("timeout", "5s"))
for r in c["rules"]:
    assert r["type"] != "permanent" or r["condition"] in conditions, r
    assert seconds(r.get("timeout", "0s")) <= global_timeout, r
    assert r["args"][0] == "--check", r
    # NPD SIGKILLs the plugin's group at its timeout: an active check needs its own first.
    if "--active" in r["args"]:
        assert seconds(r["timeout"]) >= 120 + 15, r
PY

# --- What the manifests ask of our programs -------------------------------------------------------
node "$nm_tmp/extract.js" "$daemonset" ConfigMap neuron-monitord.json "$nm_tmp/daemon.json" ||
  nm_fail "no ConfigMap in $daemonset"
node "$nm_tmp/extract.js" "$daemonset" DaemonSet - "$nm_tmp/daemonset.json" ||
  nm_fail "no DaemonSet in $daemonset"
# The token file the Secret provides, here a temp one.
token_path=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["auth_token_file"])' \
  "$nm_tmp/daemon.json")
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$nm_tmp/token"
chmod 600 "$nm_tmp/token"
sed "s|$token_path|$nm_tmp/token|" "$nm_tmp/daemon.json" >"$nm_tmp/daemon-here.json"
expect_status 0 "neuron-monitord --check-config on the DaemonSet's configuration" \
  "$daemon" --config "$nm_tmp/daemon-here.json" --check-config
python3 - "$nm_tmp/daemonset.json" "$nm_tmp/daemon.json" "$token_path" <<'PY' ||
import json, sys
ds, cfg, token = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
spec = ds["spec"]["template"]["spec"]
c = spec["containers"][0]
mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
volumes = {v["name"]: v for v in spec["volumes"]}
# The --config file is the ConfigMap's key, where the ConfigMap is mounted.
config_path = c["command"][c["command"].index("--config") + 1]
assert config_path == mounts["config"] + "/neuron-monitord.json", config_path
assert volumes["config"]["configMap"]["name"] == "neuron-monitord"
# The token, the socket, the kernel log, the kubelet's socket and the archive are mounted.
assert token.startswith(mounts["token"] + "/"), token
assert cfg["listeners"]["unix"]["path"].startswith(mounts["run"] + "/")
assert volumes["run"]["hostPath"]["path"] == mounts["run"] == "/run/neuron-monitor"
assert cfg["kernel_log"]["path"] == mounts["kmsg"]
assert cfg["kubernetes"]["pod_resources_socket"].startswith(mounts["pod-resources"] + "/")
assert cfg["recorder"]["directory"].startswith(mounts["state"] + "/")
# The probes ask the metrics listener, on its port, for /healthz and /readyz.
port = int(cfg["listeners"]["metrics"]["address"].rsplit(":", 1)[1])
assert [p["containerPort"] for p in c["ports"] if p["name"] == "metrics"] == [port]
assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
assert spec["hostPID"] is True
PY
  nm_fail "the DaemonSet and its configuration disagree"

# NPD's rule, run as NPD runs it, against a simulated node: exit 0 (OK), then, with the daemon
# gone, 2 (Unknown) — never 3, a usage error NPD would also call Unknown.
mapfile -t args < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["rules"][0]
print(r["path"]); print("\n".join(r["args"]))' "$npd_json")
[ "${args[0]}" = /usr/bin/neuron-ls ] || nm_fail "the rule runs ${args[0]}"
socket=$nm_tmp/neuron-monitord.sock
rule_args=()
for a in "${args[@]:1}"; do
  [ "$a" = /run/neuron-monitor/neuron-monitord.sock ] && a=$socket
  rule_args+=("$a")
done
"$daemon" --device sim:trn1.32xlarge --scenario idle --socket "$socket" --metrics-listen off \
  --record off >"$nm_tmp/daemon.log" 2>&1 &
daemon_pid=$!
nm_cleanup_hooks+=("kill $daemon_pid 2>/dev/null; wait $daemon_pid 2>/dev/null")
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || { cat "$nm_tmp/daemon.log" >&2; nm_fail "the daemon did not start"; }
expect_status 0 "the NPD rule on a healthy node" "$ls_bin" "${rule_args[@]}"
grep -q '^healthy: 16 devices ok' "$nm_tmp/out" || nm_fail "$(cat "$nm_tmp/out")"
kill "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
expect_status 2 "the NPD rule without a daemon" "$ls_bin" "${rule_args[@]}"
echo "kubernetes: ok"
