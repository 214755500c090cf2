#!/usr/bin/env python3
"""deploy/monitoring holds a PrometheusRule whose spec is a valid Prometheus rules file, every alert
of which the promtool unit tests in tests/monitoring/rules_test.yaml fire (and also hold back at
least once), and a Grafana dashboard whose panels all use the datasource variable. Every neuron_*
metric either of them names must be one the code in lib/ defines. Standard library only (no
PyYAML): the YAML is checked textually and by promtool itself.

  tests/monitoring/check_monitoring.py SOURCE_DIR

Exits 0 when everything holds, 1 on any failure, 77 (skipped) when promtool is not installed and
every check that does not need it passed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = []

# The four metrics being added alongside this file; accepted even before lib/ defines them.
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
NAME_RE = re.compile(r"(?<![A-Za-z0-9_:])neuron_[a-z_]+")


def expect(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
    return ok


def defined_metric_names(src):
    names = set()
    literal = re.compile(r'"(neuron_[a-z_]+)"')
    for root, _, files in os.walk(os.path.join(src, "lib")):
        for f in files:
            if f.endswith((".cc", ".h")):
                with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
                    names.update(literal.findall(fh.read()))
    return names


def unknown_names(text, defined):
    bad = set()
    for name in NAME_RE.findall(text):
        if name in defined:
            continue
        base = next((name[: -len(s)] for s in HISTOGRAM_SUFFIXES if name.endswith(s)), None)
        if base is None or base not in defined:
            bad.add(name)
    return sorted(bad)


# ---------------------------------------------------------------- the PrometheusRule, textually
def split_rule_object(text):
    """(top-level key -> its lines) and the rules file that is spec's body dedented by two."""
    top, current = {}, None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            if current is not None:
                top[current].append(line)
            continue
        if not line.startswith(" "):
            current = line.split(":", 1)[0]
            expect(current not in top, f"prometheus-rule.yaml: top-level key {current} appears once")
            top[current] = [line]
        elif current is not None:
            top[current].append(line)
    rules = []
    for line in top.get("spec", [])[1:]:
        if line.strip():
            expect(line.startswith("  "), f"spec line is indented by two or more: {line!r}")
        rules.append(line[2:])
    return top, "\n".join(rules).rstrip() + "\n"


def check_rule_object(text):
    top, rules = split_rule_object(text)
    expect(top.get("apiVersion", [""])[0] == "apiVersion: monitoring.coreos.com/v1",
           "apiVersion: monitoring.coreos.com/v1")
    expect(top.get("kind", [""])[0] == "kind: PrometheusRule", "kind: PrometheusRule")
    meta = [l for l in top.get("metadata", []) if l.strip() and not l.lstrip().startswith("#")]
    expect("  name: neuron-alerts" in meta, "metadata.name: neuron-alerts")
    expect("  namespace: aws-neuron-operator" in meta, "metadata.namespace: aws-neuron-operator")
    labels_at = meta.index("  labels:") if "  labels:" in meta else -1
    label_lines = []
    for l in meta[labels_at + 1:] if labels_at >= 0 else []:
        if not l.startswith("    "):
            break
        label_lines.append(l.strip())
    expect("app.kubernetes.io/part-of: aws-neuron" in label_lines,
           "metadata.labels app.kubernetes.io/part-of: aws-neuron")
    expect(rules.startswith("groups:"), "spec dedented by two begins with groups:")
    expect(set(top) == {"apiVersion", "kind", "metadata", "spec"},
           f"top-level keys are apiVersion, kind, metadata, spec (got {sorted(top)})")
    return rules


def yaml_blocks(rules, key):
    """Values of `key:` in the rules text, plain or block scalars (|, |-, >, >-)."""
    lines, out = rules.splitlines(), []
    pat = re.compile(r"^(\s*)(?:- )?" + re.escape(key) + r":\s*(.*)$")
    for i, line in enumerate(lines):
        m = pat.match(line)
        if not m:
            continue
        value = m.group(2)
        if value[:1] in ("|", ">"):
            indent, body = len(m.group(1)), []
            for nxt in lines[i + 1:]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                body.append(nxt.strip())
            value = "\n".join(body)
        out.append(value)
    return out


def alert_blocks(rules):
    """alert name -> its lines, from '- alert: X' up to the next rule or group."""
    blocks, name = {}, None
    for line in rules.splitlines():
        m = re.match(r"^\s*- alert:\s*(\S+)\s*$", line)
        if m:
            name = m.group(1)
            expect(name not in blocks, f"alert {name} is defined once")
            blocks[name] = []
            continue
        if re.match(r"^\s*- (record|name):", line):
            name = None
        if name:
            blocks[name].append(line)
    return blocks


def check_alerts(rules, defined, records):
    blocks = alert_blocks(rules)
    expect(len(blocks) > 0, "the rules define alerts")
    for name, lines in blocks.items():
        body = "\n".join(l for l in lines if not l.lstrip().startswith("#"))
        expect(re.search(r"^\s*severity:\s*(critical|warning|info)\s*$", body, re.M) is not None,
               f"{name}: severity label critical, warning or info")
        for a in ("summary", "description"):
            expect(re.search(rf"^\s*{a}:", body, re.M) is not None, f"{name}: {a} annotation")
        expect("runbook_url" not in body, f"{name}: no runbook_url (the README is the runbook)")
        expect("Troubleshooting" in body, f"{name}: description points at the README's Troubleshooting")
        expect(any(l.lstrip().startswith("#") for l in lines),
               f"{name}: a comment says why its threshold is what it is")
    exprs = yaml_blocks(rules, "expr")
    expect(len(exprs) == len(blocks) + len(records),
           f"every rule has an expr ({len(exprs)} for {len(blocks)} alerts and {len(records)} records)")
    text = "\n".join(l for l in rules.splitlines() if not l.lstrip().startswith("#"))
    bad = unknown_names(text, defined)
    expect(not bad, "rule exprs and annotations name only metrics lib/ defines"
           + (f": unknown {bad}" if bad else ""))
    return sorted(blocks)


def recorded_names(rules):
    """The `record:` names of the recording rules, each level:metric:operations with a colon."""
    names = [m.group(1) for m in re.finditer(r"^\s*- record:\s*(\S+)\s*$", rules, re.M)]
    for n in names:
        expect(names.count(n) == 1, f"recording rule {n} is defined once")
        expect(re.fullmatch(r"[a-z_]+:[a-z_]+:[a-z_0-9]+", n) is not None,
               f"recording rule {n} is named level:metric:operations")
    return names


RECORDED_RE = re.compile(r"[a-z_]+:[a-z_]+:[a-z_0-9]+")


def check_records_tested(records, test_text):
    """Every recording rule has a promql_expr_test whose expr names it."""
    tested = set()
    for expr in re.findall(r"^\s*- expr:\s*(.+?)\s*$", test_text, re.M):
        tested.update(RECORDED_RE.findall(expr))
    for r in records:
        expect(r in tested, f"recording rule {r}: a promql_expr_test evaluates it")


# ---------------------------------------------------------------- promtool unit tests, textually
def tested_alerts(test_text):
    """alertname -> (fires in some case, held back in some case)."""
    seen = {}
    lines = test_text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^\s*(?:- )?alertname:\s*(\S+)\s*$", line)
        if not m:
            continue
        fires, held = seen.get(m.group(1), (False, False))
        for nxt in lines[i + 1:]:
            if re.match(r"^\s*(?:- )?(alertname|eval_time):", nxt) or re.match(r"^\s*- interval:", nxt):
                break
            e = re.match(r"^\s*exp_alerts:\s*(.*?)\s*$", nxt)
            if e:
                if e.group(1) == "[]":
                    held = True
                elif e.group(1) == "":
                    fires = True
        seen[m.group(1)] = (fires, held)
    return seen


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


# ---------------------------------------------------------------- the Grafana dashboard
def walk_panels(panels):
    for p in panels:
        yield p
        yield from walk_panels(p.get("panels", []))


def refers_to_variable(ds):
    if isinstance(ds, str):
        return ds in ("$datasource", "${datasource}")
    return isinstance(ds, dict) and ds.get("uid") in ("$datasource", "${datasource}")


def check_dashboard(path, defined, records):
    try:
        with open(path, encoding="utf-8") as fh:
            dash = json.load(fh)
    except (OSError, ValueError) as e:
        expect(False, f"grafana-dashboard.json loads: {e}")
        return
    expect(dash.get("schemaVersion") == 39, "dashboard schemaVersion 39")
    expect(bool(dash.get("uid")) and bool(dash.get("title")), "dashboard has uid and title")
    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = variables.get("datasource", {})
    expect(ds.get("type") == "datasource" and ds.get("query") == "prometheus",
           "template variable datasource: type datasource, query prometheus")
    node = variables.get("node", {})
    node_query = node.get("query")
    if isinstance(node_query, dict):
        node_query = node_query.get("query", "")
    expect(node.get("type") == "query" and "label_values(" in str(node_query)
           and refers_to_variable(node.get("datasource")),
           "template variable node: a label_values query on the datasource variable")
    bad_vars = unknown_names(str(node_query), defined)
    expect(not bad_vars, "node variable names only defined metrics" + (f": {bad_vars}" if bad_vars else ""))

    ids, boxes, names, overlaps = set(), [], set(), []
    panels = list(walk_panels(dash.get("panels", [])))
    expect(len(panels) > 0, "dashboard has panels")
    for p in panels:
        title = p.get("title", "?")
        pid = p.get("id")
        expect(isinstance(pid, int) and pid not in ids, f"panel {title!r}: unique integer id {pid}")
        ids.add(pid)
        g = p.get("gridPos", {})
        ok = all(isinstance(g.get(k), int) for k in ("h", "w", "x", "y")) and g.get("w", 0) > 0 \
            and g.get("h", 0) > 0 and g.get("x", 0) >= 0 and g.get("x", 0) + g.get("w", 0) <= 24
        expect(ok, f"panel {title!r}: gridPos h, w, x, y within 24 columns")
        if ok:
            for other_title, o in boxes:
                overlap = g["x"] < o["x"] + o["w"] and o["x"] < g["x"] + g["w"] \
                    and g["y"] < o["y"] + o["h"] and o["y"] < g["y"] + g["h"]
                if overlap:
                    overlaps.append(f"{title!r} and {other_title!r}")
            boxes.append((title, g))
        if p.get("type") == "row":
            continue
        expect(refers_to_variable(p.get("datasource")),
               f"panel {title!r}: datasource is the ${{datasource}} variable")
        targets = p.get("targets", [])
        expect(len(targets) > 0, f"panel {title!r}: has targets")
        for t in targets:
            expr = t.get("expr", "")
            expect(bool(expr) and bool(t.get("refId")), f"panel {title!r}: target has expr and refId")
            if "datasource" in t:
                expect(refers_to_variable(t["datasource"]),
                       f"panel {title!r} target {t.get('refId')}: datasource is the variable")
            bad = unknown_names(expr, defined)
            expect(not bad, f"panel {title!r} target {t.get('refId')}: metrics defined in lib/"
                   + (f": unknown {bad}" if bad else ""))
            missing = sorted(set(RECORDED_RE.findall(expr)) - set(records))
            expect(not missing, f"panel {title!r} target {t.get('refId')}: recorded series the "
                   "rules define" + (f": unknown {missing}" if missing else ""))
            names.update(NAME_RE.findall(expr))
    expect(not overlaps, "panels do not overlap" + (f": {overlaps}" if overlaps else ""))
    return names


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    src = sys.argv[1]
    mon = os.path.join(src, "deploy", "monitoring")
    defined = defined_metric_names(src)
    expect(len(defined) > 20, f"found {len(defined)} metric names in lib/")

    with open(os.path.join(mon, "prometheus-rule.yaml"), encoding="utf-8") as fh:
        rules = check_rule_object(fh.read())
    records = recorded_names(rules)
    alerts = check_alerts(rules, defined, records)

    test_path = os.path.join(src, "tests", "monitoring", "rules_test.yaml")
    with open(test_path, encoding="utf-8") as fh:
        test_text = fh.read()
    expect(re.search(r"^rule_files:\s*\n\s*- RULES_FILE\s*$", test_text, re.M) is not None,
           "rules_test.yaml: rule_files is the RULES_FILE placeholder")
    check_records_tested(records, test_text)
    seen = tested_alerts(test_text)
    for a in alerts:
        fires, held = seen.get(a, (False, False))
        expect(fires, f"{a}: a promtool test case expects it to fire")
        expect(held, f"{a}: a promtool test case expects it not to fire (exp_alerts: [])")
    for a in sorted(set(seen) - set(alerts)):
        expect(False, f"rules_test.yaml tests {a}, which the rules do not define")

    check_dashboard(os.path.join(mon, "grafana-dashboard.json"), defined, records)

    promtool = shutil.which("promtool")
    if promtool is None:
        print("SKIP promtool is not installed: rules not checked or unit-tested")
        if failures:
            print(f"\n{len(failures)} check(s) failed")
            return 1
        return 77
    with tempfile.TemporaryDirectory(prefix="neuron-monitoring-") as tmp:
        rules_file = os.path.join(tmp, "neuron-alerts.rules.yaml")
        with open(rules_file, "w", encoding="utf-8") as fh:
            fh.write(rules)
        rc, out = run([promtool, "check", "rules", rules_file])
        expect(rc == 0, "promtool check rules on spec dedented by two" + ("" if rc == 0 else ":\n" + out))
        test_file = os.path.join(tmp, "rules_test.yaml")
        with open(test_file, "w", encoding="utf-8") as fh:
            fh.write(test_text.replace("RULES_FILE", rules_file))
        rc, out = run([promtool, "test", "rules", test_file])
        expect(rc == 0, "promtool test rules tests/monitoring/rules_test.yaml" + ("" if rc == 0 else ":\n" + out))

    if failures:
        print(f"\n{len(failures)} check(s) failed:")
        for f in failures:
            print("  " + f.splitlines()[0])
        return 1
    print(f"\nall checks passed ({len(alerts)} alerts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
