"""
`datahub` as its console script runs it, with each HTTP request it makes timed, for bench:ingest. Run in
a DataHub client virtualenv:

    python test/bench/ingestTimed.py <spans.jsonl> <bodies.jsonl> ingest -c recipe.yml

Every request the client sends through `requests` (the REST emitter's session, the graph's) is wrapped at
`requests.Session.request`: one line in <spans.jsonl> per request, `{"t0", "t1", "method", "path",
"status", "bytes"}` (epoch seconds, from just before the request is handed to `requests` to just after
its answer was read), and the body of each `ingestProposalBatch` in <bodies.jsonl>, one per line as
sent, so that the benchmark can send the same batches again straight to svc. The recording happens after
`t1`: it is the client's time, not the server's. Nothing else of the client is changed.
"""

import json
import os
import sys
import threading
import time

import requests

spans_path, bodies_path = sys.argv[1], sys.argv[2]
spans = open(spans_path, "w")
bodies = open(bodies_path, "w")
lock = threading.Lock()
original = requests.Session.request


def timed(self, method, url, *args, **kwargs):
    t0 = time.time()
    status = None
    try:
        response = original(self, method, url, *args, **kwargs)
        status = response.status_code
        return response
    finally:
        t1 = time.time()
        data = kwargs.get("data")
        path = url.split("://", 1)[-1]
        path = path[path.find("/") :] if "/" in path else "/"
        line = {"t0": t0, "t1": t1, "method": method.upper(), "path": path, "status": status, "bytes": len(data) if isinstance(data, (str, bytes)) else 0}
        with lock:
            spans.write(json.dumps(line) + "\n")
            if "action=ingestProposalBatch" in path and isinstance(data, (str, bytes)):
                bodies.write((data.decode() if isinstance(data, bytes) else data).replace("\n", " ") + "\n")


requests.Session.request = timed

# bench:ingest --switch-interval: how long a thread holds the interpreter lock before another may run (an
# experiment on the client's own share of its request spans; Python's default is 5 ms).
if os.environ.get("SVC_BENCH_SWITCH_INTERVAL"):
    sys.setswitchinterval(float(os.environ["SVC_BENCH_SWITCH_INTERVAL"]))

from datahub.entrypoints import main  # noqa: E402  (after the wrapping, so every session gets it)

sys.argv = ["datahub", *sys.argv[3:]]
try:
    code = main()
finally:
    with lock:
        spans.close()
        bodies.close()
sys.exit(code)
