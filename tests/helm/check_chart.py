#!/usr/bin/env python3
"""deploy/helm/neuron-operator renders the same objects as deploy/: helm is not a Debian package,
so the chart keeps to a subset of Go templates this test renders itself ({{ .Release.Namespace }},
{{ .Values.a.b }}, and {{- if .Values.x }} ... {{- end }} blocks, not nested) and any other
construct fails the test, so nothing in the chart can mean something here that helm would read
differently. With the default values and the namespace aws-neuron-operator the chart must render
deploy/operator/operator.yaml exactly; its crds/ must be deploy/operator's CRDs byte for byte.

  tests/helm/check_chart.py SOURCE_DIR
"""
import os
import re
import sys

failures = []


def expect(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def load_values(path):
    """values.yaml as nested dicts: 'key: value' and 'key: {a: b, c: d}' lines, by indentation."""
    root, stack = {}, [(-1, None)]
    stack[0] = (-1, root)
    for raw in open(path):
        line = raw.split(" #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        key, _, value = line.strip().partition(":")
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        value = value.strip()
        if not value:
            parent[key] = {}
            stack.append((indent, parent[key]))
        elif value.startswith("{"):
            parent[key] = dict(
                (k.strip(), v.strip()) for k, v in
                (kv.split(":", 1) for kv in value.strip("{}").split(",")))
        else:
            parent[key] = {"true": True, "false": False}.get(value, value)
    return root


def lookup(values, path):
    node = values
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(f".Values.{path} is not in values.yaml")
        node = node[part]
    return node


def render(text, values, namespace):
    def block(m):
        return m.group(2) if lookup(values, m.group(1)) else ""
    text = re.sub(r"\{\{- if \.Values\.([\w.]+) \}\}\n(.*?)\{\{- end \}\}\n?", block, text,
                  flags=re.S)
    text = text.replace("{{ .Release.Namespace }}", namespace)
    text = re.sub(r"\{\{ \.Values\.([\w.]+) \}\}", lambda m: str(lookup(values, m.group(1))), text)
    if "{{" in text:
        raise ValueError("a template construct this subset does not know: " +
                         text[text.index("{{"):text.index("{{") + 60])
    return text


def strip_comments(text):
    """Leading comment lines (the files' own headers differ) and blank lines dropped."""
    lines = [l for l in text.splitlines() if l.strip()]
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "\n".join(lines)


def main():
    src = sys.argv[1]
    chart = os.path.join(src, "deploy/helm/neuron-operator")
    values = load_values(os.path.join(chart, "values.yaml"))
    templates = {name: open(os.path.join(chart, "templates", name)).read()
                 for name in sorted(os.listdir(os.path.join(chart, "templates")))}
    operator = open(os.path.join(src, "deploy/operator/operator.yaml")).read()
    sample = open(os.path.join(src, "deploy/operator/samples/deviceconfig-v1beta1.yaml")).read()
    nfd_rule = open(os.path.join(src, "deploy/operator/nfd-rule.yaml")).read()

    rendered = {n: render(t, values, "aws-neuron-operator") for n, t in templates.items()}
    expect(strip_comments(rendered["operator.yaml"]) == strip_comments(operator),
           "default values render deploy/operator/operator.yaml exactly")
    expect(rendered["sample-deviceconfig.yaml"].strip() == "",
           "no sample DeviceConfig unless sampleDeviceConfig.create")
    expect(strip_comments(rendered["nfd-rule.yaml"]) == strip_comments(nfd_rule),
           "default values render deploy/operator/nfd-rule.yaml exactly")

    custom = dict(values)
    custom["image"] = {"repository": "registry.example.com/neuron-operator", "tag": "1.2.3"}
    custom["replicas"] = 3
    custom["sampleDeviceConfig"] = dict(values["sampleDeviceConfig"], create=True)
    custom["nfdRule"] = {"create": True, "group": "nfd.openshift.io"}
    out = {n: render(t, custom, "neuron-system") for n, t in templates.items()}
    op = out["operator.yaml"]
    expect('image: registry.example.com/neuron-operator:1.2.3\n' in op, "image from values")
    expect("  replicas: 3\n" in op, "replicas from values")
    expect("aws-neuron-operator" not in op and op.count("namespace: neuron-system") == 3,
           "every namespaced object and subject in the release namespace")
    # The kustomize base's DeviceConfig: the sample file with our images (sample-our-images.yaml).
    ours = open(os.path.join(src, "deploy/operator/sample-our-images.yaml")).read()
    image = {k: re.search(rf"^  {k}: (\S+)$", ours, re.M).group(1)
             for k in ("devicePluginImage", "schedulerExtensionImage", "nodeAgentImage")}
    expected = sample.replace("namespace: aws-neuron-operator", "namespace: neuron-system")
    expected = re.sub(r"^  devicePluginImage: .*$", "  devicePluginImage: " +
                      image["devicePluginImage"], expected, flags=re.M)
    expected = re.sub(r"^  schedulerExtensionImage: .*$", "  schedulerExtensionImage: " +
                      image["schedulerExtensionImage"] + "\n  nodeAgentImage: " +
                      image["nodeAgentImage"], expected, flags=re.M)
    expect(strip_comments(out["sample-deviceconfig.yaml"]) == strip_comments(expected),
           "the sample DeviceConfig is the kustomize base's, in the release namespace")

    expect(strip_comments(out["nfd-rule.yaml"]) ==
           strip_comments(nfd_rule.replace("nfd.k8s-sigs.io/", "nfd.openshift.io/")),
           "nfdRule.group sets the NodeFeatureRule's group (OpenShift)")
    no_rule = dict(values)
    no_rule["nfdRule"] = {"create": False, "group": "nfd.k8s-sigs.io"}
    expect(render(templates["nfd-rule.yaml"], no_rule, "x").strip() == "",
           "no NodeFeatureRule with nfdRule.create=false")

    for crd in ("crd-deviceconfigs.yaml", "crd-neuroncaches.yaml"):
        with open(os.path.join(chart, "crds", crd), "rb") as a, \
                open(os.path.join(src, "deploy/operator", crd), "rb") as b:
            expect(a.read() == b.read(), "crds/ holds deploy/operator/" + crd + " as is")
    chart_yaml = open(os.path.join(chart, "Chart.yaml")).read()
    expect("apiVersion: v2" in chart_yaml and "name: neuron-operator" in chart_yaml,
           "Chart.yaml: apiVersion v2, name")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("helm chart: all checks passed")


if __name__ == "__main__":
    main()
