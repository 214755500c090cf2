#!/usr/bin/env python3
"""Validates deploy/monitoring/grafana-dashboard.json against Grafana's own dashboard rules, written
down as a JSON Schema in tests/monitoring/grafana_dashboard_schema.json (from Grafana's CUE for
schemaVersion 39; each part cites its CUE file). No Grafana runs here, so this is the check that the
JSON model would load. Then it proves the schema bites: mutated copies of the dashboard that break
one rule each (gridPos w=30, a panel with no type, a threshold step with a string value, an unknown
graphTooltip, ...) MUST be rejected, each for a violation the dashboard itself does not have.

  /usr/bin/python3 tests/monitoring/check_grafana_schema.py SOURCE_DIR

Prints every violation with its JSON path. Exits 0 when the dashboard is valid and every mutation is
rejected, 1 otherwise, 77 (skipped) when python3-jsonschema is not installed.
"""
import copy
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP python3 module jsonschema is not installed (Debian: apt-get install python3-jsonschema)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_PATH = os.path.join(HERE, "grafana_dashboard_schema.json")
DASHBOARD_REL = os.path.join("deploy", "monitoring", "grafana-dashboard.json")


def load_json(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def violations(validator, doc):
    """Every violation as 'PATH: message', deepest cause first for if/then and anyOf failures."""
    out = []
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
        leaves = [err]
        if err.context:  # anyOf/oneOf: report the branch that got furthest, not just "not valid"
            leaves = [jsonschema.exceptions.best_match(err.context)]
        for leaf in leaves:
            out.append("%s: %s" % (leaf.json_path, leaf.message))
    return out


# ----------------------------------------------------------------------- mutations that must fail
def first_panel(dash, ptype):
    for p in dash.get("panels", []):
        if p.get("type") == ptype:
            return p
    raise LookupError("the dashboard has no %s panel to mutate" % ptype)


def set_grid_w30(d):
    first_panel(d, "timeseries")["gridPos"]["w"] = 30


def set_grid_x24(d):
    first_panel(d, "timeseries")["gridPos"]["x"] = 24


def set_grid_h_float(d):
    first_panel(d, "timeseries")["gridPos"]["h"] = 7.5


def drop_panel_type(d):
    del first_panel(d, "timeseries")["type"]


def empty_panel_type(d):
    first_panel(d, "timeseries")["type"] = ""


def threshold_string_value(d):
    p = first_panel(d, "timeseries")
    p["fieldConfig"]["defaults"]["thresholds"] = {
        "mode": "absolute", "steps": [{"color": "green", "value": None}, {"color": "red", "value": "80"}]}


def threshold_bad_mode(d):
    p = first_panel(d, "timeseries")
    p["fieldConfig"]["defaults"]["thresholds"] = {"mode": "relative", "steps": []}


def graph_tooltip_3(d):
    d["graphTooltip"] = 3


def graph_tooltip_string(d):
    d["graphTooltip"] = "shared"


def unit_number(d):
    first_panel(d, "timeseries")["fieldConfig"]["defaults"]["unit"] = 5


def color_mode_unknown(d):
    first_panel(d, "timeseries")["fieldConfig"]["defaults"]["color"] = {"mode": "rainbow"}


def variable_bad_type(d):
    d["templating"]["list"][0]["type"] = "dropdown"


def variable_no_name(d):
    del d["templating"]["list"][0]["name"]


def target_no_refid(d):
    del first_panel(d, "timeseries")["targets"][0]["refId"]


def prometheus_target_no_expr(d):
    del first_panel(d, "timeseries")["targets"][0]["expr"]


def row_without_id(d):
    del first_panel(d, "row")["id"]


def time_from_number(d):
    d["time"]["from"] = 6


def legend_bad_placement(d):
    first_panel(d, "timeseries")["options"]["legend"]["placement"] = "top"


def unknown_top_level_key(d):
    d["grafanaVersion"] = "11.0.0"


MUTATIONS = [
    ("gridPos w=30 (w is 1..24)", set_grid_w30),
    ("gridPos x=24 (x is 0..23)", set_grid_x24),
    ("gridPos h=7.5 (uint32)", set_grid_h_float),
    ("a panel with no type", drop_panel_type),
    ("a panel with type \"\" (MinRunes(1))", empty_panel_type),
    ("a threshold step whose value is the string \"80\"", threshold_string_value),
    ("thresholds mode \"relative\"", threshold_bad_mode),
    ("graphTooltip 3 (0..2)", graph_tooltip_3),
    ("graphTooltip \"shared\"", graph_tooltip_string),
    ("fieldConfig.defaults.unit a number", unit_number),
    ("color mode \"rainbow\"", color_mode_unknown),
    ("variable type \"dropdown\"", variable_bad_type),
    ("variable without name", variable_no_name),
    ("target without refId", target_no_refid),
    ("prometheus target without expr", prometheus_target_no_expr),
    ("row panel without id", row_without_id),
    ("time.from a number", time_from_number),
    ("timeseries legend placement \"top\"", legend_bad_placement),
    ("an unknown top-level key (the model is closed)", unknown_top_level_key),
]


def main(argv):
    if len(argv) != 2:
        print("usage: check_grafana_schema.py SOURCE_DIR", file=sys.stderr)
        return 2
    schema = load_json(SCHEMA_PATH)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    dash_path = os.path.join(argv[1], DASHBOARD_REL)
    dashboard = load_json(dash_path)

    failed = False
    found = violations(validator, dashboard)
    if found:
        failed = True
        print("FAIL %s breaks %d Grafana schema rule(s):" % (DASHBOARD_REL, len(found)))
        for v in found:
            print("     " + v)
    else:
        print("ok   %s is valid against Grafana's dashboard schema (schemaVersion %s)"
              % (DASHBOARD_REL, dashboard.get("schemaVersion")))

    for what, mutate in MUTATIONS:
        doc = copy.deepcopy(dashboard)
        mutate(doc)
        # Only a violation the unmutated dashboard does not already have counts as caught.
        caught = [v for v in violations(validator, doc) if v not in found]
        if caught:
            print("ok   rejects %s: %s" % (what, caught[0]))
        else:
            failed = True
            print("FAIL accepts %s: the schema does not enforce this rule" % what)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
