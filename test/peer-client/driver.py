"""Drives komputer-ai's Python SDK (komputer-ai-sdk, unchanged) for test/integration/peer-client.test.ts.

Test tooling only. Reads one JSON request per line on stdin and answers one JSON line on stdout:

  {"call": "create_agent", "args": [...], "kwargs": {...}}   a method of KomputerClient
  {"call": "squads.patch_squad", ...}                          a method of one of its generated APIs
  {"call": "download", "kwargs": {"path": "/agents/x/download/a.bin"}}   a GET through the SDK's
      own HTTP client (the SDK has no download method; komputer-ai's dashboard calls this path)
  {"call": "watch", "kwargs": {"name": "x", "until": ["task_completed"], "since": "<RFC 3339>", "max": 500, "group": ""}}
      KomputerClient.watch_agent, iterated from `since` until an event of one of the `until` types

An argument {"__model__": "ClassName", "value": {...}} becomes komputer_ai.models.ClassName.from_dict(value).

Answers: {"ok": true, "result": <the return value as JSON>} or {"ok": false, "status": <HTTP status>,
"reason": ..., "body": <the error body>} for the SDK's ApiException, or {"ok": false, "exception":
<type>, "message": ...} for anything else (e.g. the SDK could not read an answer).
"""

import base64
import dataclasses
import json
import sys
import traceback

import komputer_ai.models as models
from komputer_ai.client import KomputerClient
from komputer_ai.exceptions import ApiException


def build(value):
    if isinstance(value, dict):
        if "__model__" in value:
            return getattr(models, value["__model__"]).from_dict(value["value"])
        return {k: build(v) for k, v in value.items()}
    if isinstance(value, list):
        return [build(v) for v in value]
    return value


def plain(value):
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return {"base64": base64.b64encode(bytes(value)).decode()}
    # Before to_dict: the SDK's event Payload is a dict whose attributes are its keys.
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value):
        return plain({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    if callable(getattr(value, "to_dict", None)):
        return plain(value.to_dict())
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return repr(value)


def target(client, call):
    obj = client
    for part in call.split("."):
        obj = getattr(obj, part)
    return obj


def download(client, path):
    api = client._api_client
    res = api.call_api("GET", api.configuration.host + path)
    data = res.read()
    if not 200 <= res.status <= 299:
        raise ApiException(http_resp=res, body=data.decode("utf-8", "replace"), data=None)
    headers = {k.lower(): v for k, v in res.getheaders().items()}
    return {"bytes": data, "contentType": headers.get("content-type"), "contentDisposition": headers.get("content-disposition")}


def watch(client, name, until, max_events, group, since):
    """The stream starts with the agent's recent history (earlier tasks' too): the events from
    `since` (an RFC 3339 time) on are kept, and the first of them of an `until` type ends it."""
    events = []
    with client.watch_agent(name, group) as stream:
        for event in stream:
            if event.timestamp < since:
                continue
            events.append(event)
            if event.type in until or len(events) >= max_events:
                break
    return events


def run(client, req):
    call = req["call"]
    args = build(req.get("args", []))
    kwargs = build(req.get("kwargs", {}))
    if call == "download":
        return download(client, kwargs["path"])
    if call == "watch":
        return watch(client, kwargs["name"], kwargs.get("until", []), kwargs.get("max", 1000), kwargs.get("group", ""), kwargs.get("since", ""))
    return target(client, call)(*args, **kwargs)


def main():
    client = KomputerClient(sys.argv[1])
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            answer = {"ok": True, "result": plain(run(client, req))}
        except ApiException as e:
            body = e.body
            try:
                body = json.loads(body) if isinstance(body, (str, bytes)) and body else body
            except ValueError:
                pass
            answer = {"ok": False, "status": e.status, "reason": e.reason, "body": plain(body)}
        except Exception as e:  # the SDK failed otherwise: the test reports it
            answer = {"ok": False, "exception": type(e).__name__, "message": str(e), "trace": traceback.format_exc()[-2000:]}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    client.close()


if __name__ == "__main__":
    main()
