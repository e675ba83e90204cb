# schemathesis hooks for the aggregated API's run of `make fuzz` (hack/fuzz.sh; why:
# docs/reliability.md "Fuzzing"). Loaded through SCHEMATHESIS_HOOKS.
#
# - Log follows end: follow is sent as false (a follow streams until the agent is deleted);
#   the integration suites cover following.
# - Lists are lists: watch is sent as false (a watch answers a stream of WatchEvents, which
#   schemathesis would read as one document of the list's schema); every other list option
#   is generated. The watch suites and `kubectl get -w` tests cover watching.
# - Agent create and replace are generated: the document's `model` pattern uses Unicode
#   properties (\p{Cc}, as Go clients read it), which Python's regular expressions lack; it is
#   replaced, for this run only, by the portable spelling the REST document publishes
#   (AGENTPLANE_MODEL_PATTERN -> AGENTPLANE_MODEL_PATTERN_PORTABLE, from pkg/api/agent.ts).
import os

import schemathesis

MODEL_PATTERN = os.environ["AGENTPLANE_MODEL_PATTERN"]
MODEL_PATTERN_PORTABLE = os.environ["AGENTPLANE_MODEL_PATTERN_PORTABLE"]


def _portable(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and value == MODEL_PATTERN:
                node[key] = MODEL_PATTERN_PORTABLE
            else:
                _portable(value)
    elif isinstance(node, list):
        for item in node:
            _portable(item)


@schemathesis.hook
def before_load_schema(context, raw_schema):
    _portable(raw_schema)


COLLECTIONS = ("/agents", "/squads", "/connectors")


def _bounded(operation, query):
    """The query of a log request without follow, and of a list without watch (else unchanged)."""
    if operation is None or operation.method.upper() != "GET":
        return query
    if operation.path.endswith("/log"):
        return {**(query or {}), "follow": "false"}
    if operation.path.endswith(COLLECTIONS):
        return {**(query or {}), "watch": "false"}
    return query


# map_query reaches the generated cases (fuzzing, stateful), map_case the coverage phase's.
@schemathesis.hook
def map_query(context, query):
    return _bounded(context.operation, query)


@schemathesis.hook
def map_case(context, case):
    case.query = _bounded(case.operation, case.query)
    return case
