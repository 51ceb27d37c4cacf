"""Remote datasets end to end: `stoker pack -o s3://...` to a moto server (IAM auth on), then
inspect, verify, plan, bench, doctor and the Python Loader read it and give what the local copy
gives — batch for batch, under block and global shuffle, mixed with local data, over HTTP
(nginx) too. Every request is counted at a proxy in front of the server: opening and planning
cost a constant number of requests whatever the shard count, and the loader's own metering
(Loader.stats()["storage"], bench --json) counts the same requests. The credentials' secret
appears in no output."""

import json
import os
import random
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")

import stoker  # noqa: E402
from remote_testlib import BUCKET, Proxy, s3_env, start_moto, start_nginx, upload_dir  # noqa: E402


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    proc, info = start_moto(tmp_path_factory.mktemp("moto"))
    try:
        yield info
    finally:
        proc.kill()
        proc.wait()
        info["log"].close()


@pytest.fixture
def proxy(s3):
    p = Proxy(s3["port"])
    yield p
    p.close()


def run(stoker_cli, s3, *args, endpoint=None, check=True):
    """The CLI with the credentials in its environment; the secret must never be printed."""
    proc = subprocess.run([stoker_cli, *map(str, args)], env=s3_env(s3, endpoint),
                          capture_output=True, text=True, timeout=300)
    assert s3["secret"] not in proc.stdout + proc.stderr
    if check:
        assert proc.returncode == 0, (args, proc.stderr)
    return proc


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    rng = random.Random(11)
    words = ["alpha", "beta", "gamma", "delta", "stoker", "shard", "remote", "bucket", "ü", "€"]
    with open(d / "in.jsonl", "w") as f:
        for _ in range(1500):
            text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 120)))
            f.write(json.dumps({"text": text}) + "\n")
    return d


@pytest.fixture(scope="module")
def datasets(stoker_cli, s3, corpus):
    """The same corpus packed locally and straight to S3 (several shards)."""
    local = corpus / "local"
    pack = ["pack", corpus / "in.jsonl", "--shard-size", "64KiB", "--num-workers", "2"]
    run(stoker_cli, s3, *pack, "-o", local)
    uri = f"s3://{BUCKET}/packed/ds"
    r = run(stoker_cli, s3, *pack, "-o", uri)
    assert uri in r.stdout
    # A second pack to the same place is refused without --overwrite (a dataset is there).
    again = run(stoker_cli, s3, *pack, "-o", uri, check=False)
    assert again.returncode == 2 and "already there" in again.stderr
    manifest = json.loads((local / "manifest.json").read_text())
    assert len(manifest["shards"]) >= 5
    return {"local": local, "uri": uri, "manifest": manifest}


def batches(loader, limit=None):
    out = []
    for i, b in enumerate(loader):
        if limit is not None and i >= limit:
            break
        out.append({k: np.asarray(v).copy() for k, v in b.items()})
    return out


def assert_same(a, b):
    assert len(a) == len(b) and len(a) > 0
    for x, y in zip(a, b):
        assert x.keys() == y.keys()
        for k in x:
            np.testing.assert_array_equal(x[k], y[k], err_msg=k)


def test_pack_to_s3_uploads_what_a_local_pack_writes(s3, datasets):
    client = s3["client"]
    local = datasets["local"]
    for name in ["manifest.json", "lengths.stkidx"] + [
            s["prefix"] + ext for s in datasets["manifest"]["shards"] for ext in (".bin", ".idx")]:
        body = client.get_object(Bucket=BUCKET, Key=f"packed/ds/{name}")["Body"].read()
        assert body == (local / name).read_bytes(), name


def test_loader_from_s3_gives_the_local_batches(s3, datasets, monkeypatch, proxy):
    import torch  # the batches are torch tensors, as in training

    for k, v in s3_env(s3, proxy.endpoint).items():
        if k.startswith("AWS_"):
            monkeypatch.setenv(k, v)
    # Straight from the server (the cached path: test_remote_cache.py).
    kw = dict(seq_len=64, batch_size=4, num_workers=3, pin_memory=False, seed=3, cache_dir=None)
    for shuffle, limit in (("block", None), ("none", None), ("global", 40)):
        local = stoker.Loader(str(datasets["local"]), shuffle=shuffle, **kw)
        remote = stoker.Loader(datasets["uri"], shuffle=shuffle, **kw)
        assert remote.fingerprint == local.fingerprint
        got = batches(remote, limit)
        assert isinstance(next(iter(stoker.Loader(datasets["uri"], **kw)))["input_ids"],
                          torch.Tensor)
        assert_same(batches(local, limit), got)
        stats = remote.stats()["storage"]
        assert stats["requests"]["HEAD"] == 1 and stats["requests"]["LIST"] == 0, stats
        assert stats["requests"]["GET"] > 2 and stats["bytes_read"] > 0, stats
    # Mixtures of local and remote datasets: the same as the same mixture of local copies.
    mix = [str(datasets["local"]), (0.5, datasets["uri"])]
    assert_same(batches(stoker.Loader([str(datasets["local"]), (0.5, str(datasets["local"]))],
                                      shuffle="block", **kw), 30),
                batches(stoker.Loader(mix, shuffle="block", **kw), 30))


def test_loader_counts_the_requests_the_server_sees(s3, datasets, monkeypatch, proxy):
    for k, v in s3_env(s3, proxy.endpoint).items():
        if k.startswith("AWS_"):
            monkeypatch.setenv(k, v)
    # Open and plan, where nothing prefetches (a Loader's workers start on its first batches as
    # soon as it is open, to hide the latency): the manifest (HEAD + GET) and the length index
    # (GET), and not one request per shard.
    kw = dict(seq_len=64, batch_size=4, shuffle="block")
    plan = stoker.plan(datasets["uri"], **kw)
    assert plan.batch(0, 0)["rows"] and dict(proxy.counts) == {"HEAD": 1, "GET": 2}, proxy.counts
    proxy.reset_counts()
    # Without persistent workers nothing is fetched past the epoch's end (the next epoch's workers
    # start at its first batch), so the counts settle. No cache: its look-ahead starts downloading
    # the first shards as soon as the loader is open (test_remote_cache counts those downloads).
    loader = stoker.Loader(datasets["uri"], num_workers=2, pin_memory=False,
                           persistent_workers=False, cache_dir=None, **kw)
    n = len(batches(loader))
    assert n > 10
    # Exact without waiting: the client counts a request when its answer has arrived (the proxy
    # before), and every request here is one the batches needed (the count below), so each was
    # answered, and counted in the thread that asked, before the last batch could be built. A part
    # fetched ahead is published to its readers only after its counted read returns.
    stats = loader.stats()["storage"]
    for kind in ("GET", "HEAD", "LIST", "PUT"):
        assert stats["requests"][kind] == proxy.counts.get(kind, 0), (kind, stats, proxy.counts)
    # Block shuffle fetches each 8 MiB part of a shard once: one .idx and one .bin GET a shard.
    shards = len(datasets["manifest"]["shards"])
    twice = {p: c for p, c in proxy.get_paths.items() if c > 1}
    assert stats["requests"]["GET"] == 2 + 2 * shards, (stats, twice)
    assert stats["retries"] == 0 and stats["failed_requests"] == 0


def test_cli_reads_remote_datasets(stoker_cli, s3, datasets, tmp_path):
    uri, local = datasets["uri"], datasets["local"]
    ri = json.loads(run(stoker_cli, s3, "inspect", "--json", uri).stdout)
    li = json.loads(run(stoker_cli, s3, "inspect", "--json", local).stdout)
    assert ri.pop("path") == uri and li.pop("path") == str(local)
    assert ri == li
    doc = run(stoker_cli, s3, "inspect", uri, "--show-document", 7).stdout
    assert doc == run(stoker_cli, s3, "inspect", local, "--show-document", 7).stdout
    v = run(stoker_cli, s3, "verify", uri)
    assert "ok" in v.stdout.lower() or v.returncode == 0
    plan = ["--seq-len", 32, "--batch-size", 2, "--steps", 5, "--shuffle", "block"]
    rp = run(stoker_cli, s3, "plan", uri, *plan).stdout
    assert rp.replace(uri, "DS") == run(stoker_cli, s3, "plan", local, *plan).stdout.replace(
        str(local), "DS")
    bench = json.loads(run(stoker_cli, s3, "bench", uri, "--seq-len", 64, "--batch-size", 4,
                           "--batches", 20, "--shuffle", "block", "--json").stdout)
    assert bench["storage"]["requests"]["HEAD"] == 1
    assert bench["storage"]["requests"]["GET"] >= 3 and bench["storage"]["bytes_read"] > 0
    doctor = run(stoker_cli, s3, "doctor", uri, "--seq-len", 64, "--batch-size", 4,
                 "--train-tokens-per-s", 1000, "--seconds", 1, check=False)
    assert doctor.returncode in (0, 1), doctor.stderr
    # A damaged shard on the server: verify names the object; a missing dataset is one error.
    shard = datasets["manifest"]["shards"][1]["prefix"]
    body = bytearray((local / f"{shard}.bin").read_bytes())
    body[10] ^= 0xFF
    s3["client"].put_object(Bucket=BUCKET, Key=f"broken/ds/{shard}.bin", Body=bytes(body))
    names = ["manifest.json", "lengths.stkidx"] + [
        s["prefix"] + ext for s in datasets["manifest"]["shards"] for ext in (".bin", ".idx")
        if s["prefix"] + ext != f"{shard}.bin"]
    upload_dir(s3["client"], local, "broken/ds", only=names)
    bad = run(stoker_cli, s3, "verify", f"s3://{BUCKET}/broken/ds", check=False)
    assert bad.returncode == 1, bad.stderr
    assert f"s3://{BUCKET}/broken/ds/{shard}.bin" in bad.stdout + bad.stderr
    missing = run(stoker_cli, s3, "inspect", f"s3://{BUCKET}/nothing", check=False)
    assert missing.returncode == 2
    assert f"s3://{BUCKET}/nothing/manifest.json" in missing.stderr


def test_wrong_secret_is_one_error_without_the_secret(stoker_cli, s3, datasets):
    wrong = "WrongSecretThatMustNeverBePrinted0123456"
    env = s3_env(s3)
    env["AWS_SECRET_ACCESS_KEY"] = wrong
    proc = subprocess.run([stoker_cli, "inspect", datasets["uri"]], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert "403" in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert wrong not in proc.stderr and s3["secret"] not in proc.stderr


def test_faults_on_the_wire_give_the_same_batches(s3, datasets, monkeypatch):
    """10% of requests go wrong — 4% fail (500), 2% get 503 SlowDown, 2% are reset unanswered, 2%
    have their body cut short — and every request is 2 ms late: the batch stream is the
    fault-free one."""
    kw = dict(seq_len=64, batch_size=4, num_workers=3, pin_memory=False, shuffle="block")
    clean = batches(stoker.Loader(str(datasets["local"]), **kw))
    faulty = Proxy(s3["port"], fail=0.04, slowdown=0.02, reset=0.02, truncate=0.02,
                   latency_s=0.002, seed=5)
    try:
        for k, v in s3_env(s3, faulty.endpoint).items():
            if k.startswith("AWS_"):
                monkeypatch.setenv(k, v)
        loader = stoker.Loader(datasets["uri"], **kw)
        assert_same(clean, batches(loader))
        stats = loader.stats()["storage"]
        assert sum(faulty.faults.values()) > 0 and stats["retries"] > 0, (faulty.faults, stats)
        assert stats["failed_requests"] > 0
    finally:
        faulty.close()


@pytest.fixture(scope="module")
def nginx_ds(tmp_path_factory, datasets):
    d = tmp_path_factory.mktemp("nginx-ds")
    (d / "www").mkdir()
    shutil.copytree(datasets["local"], d / "www" / "ds")
    proc, url = start_nginx(d)
    if proc is None:
        pytest.skip("nginx is not installed (scripts/setup installs it)")
    try:
        yield {"url": f"{url}/ds", "log": d / "access.log"}
    finally:
        proc.kill()
        proc.wait()


def test_http_datasets_read_like_local_ones(stoker_cli, s3, datasets, nginx_ds):
    kw = dict(seq_len=64, batch_size=4, num_workers=2, pin_memory=False, shuffle="block")
    assert_same(batches(stoker.Loader(str(datasets["local"]), **kw)),
                batches(stoker.Loader(nginx_ds["url"], **kw)))
    ri = json.loads(run(stoker_cli, s3, "inspect", "--json", nginx_ds["url"]).stdout)
    assert ri["tokens"] == sum(s["tokens"] for s in datasets["manifest"]["shards"])
    # nginx's log: no request per shard at open (HEAD manifest, GET manifest, GET lengths).
    before = len(nginx_ds["log"].read_text().splitlines())
    run(stoker_cli, s3, "plan", nginx_ds["url"], "--seq-len", 32, "--batch-size", 2, "--steps", 3)
    lines = nginx_ds["log"].read_text().splitlines()[before:]
    assert len(lines) == 3, lines
    assert not any(".bin" in line or ".idx" in line for line in lines), lines


SHARDS = 10000  # packed locally; only the manifest and the length index go to the server


def test_opening_and_planning_many_shards_costs_three_requests(stoker_cli, s3, tmp_path,
                                                               monkeypatch, proxy):
    """A dataset of SHARDS shards, of which only manifest.json and lengths.stkidx are on the
    server: opening and planning it — from the CLI and from Python, for ranks of 1, 8 and 64 —
    must not touch a shard (any shard request would fail: they are not there)."""
    with open(tmp_path / "many.jsonl", "w") as f:
        for i in range(SHARDS):
            f.write(json.dumps({"text": f"document {i} " + "x" * 600}) + "\n")
    # Packed on tmpfs when there is room: 20,000 files fsynced on a disk take minutes, on tmpfs
    # seconds.
    shm = "/dev/shm"
    fast = os.path.isdir(shm) and shutil.disk_usage(shm).free > (512 << 20)
    scratch = tempfile.mkdtemp(prefix="stoker-many-", dir=shm) if fast else None
    local = os.path.join(scratch or str(tmp_path), "many")
    try:
        run(stoker_cli, s3, "pack", tmp_path / "many.jsonl", "-o", local, "--shard-size",
            "1KiB", "--num-workers", "2")
        manifest = json.loads(open(os.path.join(local, "manifest.json")).read())
        assert len(manifest["shards"]) == SHARDS
        upload_dir(s3["client"], local, "many/ds", only=["manifest.json", "lengths.stkidx"])
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    uri = f"s3://{BUCKET}/many/ds"
    for world in (1, 8, 64):
        proxy.reset_counts()
        out = run(stoker_cli, s3, "plan", uri, "--seq-len", 256, "--batch-size", 2, "--steps", 2,
                  "--world-size", world, "--rank", world - 1, "--shuffle", "block",
                  endpoint=proxy.endpoint).stdout
        assert "step" in out.lower()
        assert dict(proxy.counts) == {"HEAD": 1, "GET": 2}, (world, proxy.counts)
        assert set(proxy.paths) == {"/stoker-remote/many/ds/manifest.json",
                                    "/stoker-remote/many/ds/lengths.stkidx"}, proxy.paths
    for k, v in s3_env(s3, proxy.endpoint).items():
        if k.startswith("AWS_"):
            monkeypatch.setenv(k, v)
    proxy.reset_counts()
    plan = stoker.plan(uri, seq_len=256, batch_size=2, world_size=64, rank=5)
    assert plan.steps_per_epoch() > 0
    assert dict(proxy.counts) == {"HEAD": 1, "GET": 2}, proxy.counts
    # The loader's own metering counts the same three requests, at every world size. (No cache:
    # with one, the look-ahead starts reading the first steps' shards at once, which is reading.)
    for world in (1, 8, 64):
        proxy.reset_counts()
        loader = stoker.Loader(uri, seq_len=256, batch_size=2, world_size=world, rank=world - 1,
                               shuffle="block", num_workers=1, pin_memory=False, output="numpy",
                               cache_dir=None)
        requests = loader.stats()["storage"]["requests"]
        assert dict(proxy.counts) == {"HEAD": 1, "GET": 2}, (world, proxy.counts)
        assert {k: v for k, v in requests.items() if v} == {"HEAD": 1, "GET": 2}, requests
        del loader
