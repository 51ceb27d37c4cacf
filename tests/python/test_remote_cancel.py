"""Closing a loader while its shard downloads are stalled at the server (issue 11): a proxy in
front of the S3 server reads every GET of a .bin and never answers, and the stall timeout is an
hour, so only cancellation inside the transfer can end them. In a child process (a hang must not
hang the suite), `Loader.close()` and `del loader; gc.collect()` each return, the cache directory
holds no partial file, and a new loader on the same cache, through the healthy server, delivers
the local dataset's batches. The 60 s guard only catches a hang; nothing here is timed."""

import json
import os
import queue
import random
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")

import stoker  # noqa: E402
from remote_testlib import BUCKET, Proxy, s3_env, s3_session  # noqa: E402,F401

HANG_GUARD_S = 60
KW = dict(seq_len=64, batch_size=4, num_workers=2, pin_memory=False, shuffle="block", seed=5)

CHILD = textwrap.dedent("""
    import gc, json, os, sys
    import numpy as np
    import stoker
    uri, cache, healthy, kw = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    cache_kw = {"cache_dir": cache} if cache != "-" else {"cache_dir": None}

    def wait_for_parent(what):
        print(what, flush=True)
        assert sys.stdin.readline().strip() == "go"

    loader = stoker.Loader(uri, **kw, **cache_kw)  # its workers start on the stalled shards
    wait_for_parent("opened")
    loader.close()
    print("closed", flush=True)
    loader = stoker.Loader(uri, **kw, **cache_kw)
    wait_for_parent("opened")
    del loader
    gc.collect()
    print("deleted", flush=True)
    report = {}
    if cache != "-":
        report["tmp"] = os.listdir(os.path.join(cache, "tmp"))
        report["data"] = []
        for key in os.listdir(os.path.join(cache, "data")):
            with open(os.path.join(cache, "meta", key + ".json")) as f:
                meta = json.load(f)
            size = os.path.getsize(os.path.join(cache, "data", key))
            report["data"].append([meta["uri"], meta["size_bytes"], size])
    os.environ["AWS_ENDPOINT_URL"] = healthy  # the restart, through the healthy server
    with stoker.Loader(uri, **kw, **cache_kw) as loader:
        np.save(sys.argv[5], np.stack([np.asarray(b["input_ids"]).copy() for b in loader]))
    print(json.dumps(report), flush=True)
""")


@pytest.fixture(scope="module")
def dataset(stoker_cli, s3_session, tmp_path_factory):
    d = tmp_path_factory.mktemp("cancel-corpus")
    rng = random.Random(11)
    with open(d / "in.jsonl", "w") as f:
        for i in range(300):
            f.write(json.dumps({"text": f"{i} " + "xyz"[i % 3] * rng.randint(20, 300)}) + "\n")
    uri = f"s3://{BUCKET}/cancel/ds"
    for out in (d / "local", uri):
        proc = subprocess.run(
            [stoker_cli, "pack", str(d / "in.jsonl"), "-o", str(out), "--shard-size", "16KiB",
             "--num-workers", "1"], env=s3_env(s3_session), capture_output=True, text=True,
            timeout=120)
        assert proc.returncode == 0, proc.stderr
    want = np.stack([np.asarray(b["input_ids"]).copy() for b in stoker.Loader(str(d / "local"), **KW)])
    return {"uri": uri, "want": want}


class LineReader:
    """The child's stdout, line by line, each line waited for at most HANG_GUARD_S: a hang inside
    close() or del must fail the test, not hang the suite."""

    def __init__(self, stream):
        self._lines = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream):
        for line in stream:
            self._lines.put(line.strip())

    def next(self):
        """The next line; None if none came within HANG_GUARD_S."""
        try:
            return self._lines.get(timeout=HANG_GUARD_S)
        except queue.Empty:
            return None

    def rest(self):
        """The lines left, once the child has closed its stdout."""
        self._thread.join(HANG_GUARD_S)
        return list(self._lines.queue)


@pytest.mark.parametrize("cached", [True, False], ids=["cache", "no-cache"])
def test_close_while_downloads_stall_returns_and_restarts(dataset, s3_session, tmp_path, cached):
    proxy = Proxy(s3_session["port"], stall=".bin")
    try:
        env = s3_env(s3_session, proxy.endpoint)
        env["STOKER_STALL_TIMEOUT_S"] = "3600"
        env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
        cache = str(tmp_path / "cache") if cached else "-"
        out = tmp_path / "batches.npy"
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, dataset["uri"], cache, s3_session["endpoint"],
             json.dumps(KW), str(out)],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        reader = LineReader(child.stdout)
        try:
            lines, base = [], 0
            for expect in ("opened", "closed", "opened", "deleted"):
                line = reader.next()
                if line is None:
                    raise subprocess.TimeoutExpired(child.args, HANG_GUARD_S)
                lines.append(line)
                assert line == expect, (lines, child.stderr.read() if child.poll() else "")
                if expect == "opened":
                    # Let the child close once a .bin GET of this loader is stalled.
                    assert proxy.wait_stalled(base, HANG_GUARD_S), "no shard GET reached the proxy"
                    child.stdin.write("go\n")
                    child.stdin.flush()
                else:
                    base = proxy.stalled  # the closed loader sends nothing more
            child.wait(timeout=HANG_GUARD_S)
            stdout = "\n".join(reader.rest())
            stderr = child.stderr.read()
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            pytest.fail(f"the child hung closing a loader with stalled downloads (after {lines})")
        assert child.returncode == 0, stderr
        assert s3_session["secret"] not in stdout + stderr
        report = json.loads(stdout.strip().splitlines()[-1])
        np.testing.assert_array_equal(np.load(out), dataset["want"])
        if cached:
            assert report["tmp"] == []  # no download left half-written
            for uri, meta_size, size in report["data"]:
                assert not uri.endswith(".bin"), uri  # every .bin stalled: none is published
                assert size == meta_size, uri
    finally:
        proxy.close()
