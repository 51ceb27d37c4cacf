"""Remote datasets through the node-local cache (f-cache's ShardCache behind the ShardOpener
seam): the batches are the uncached ones; two processes sharing one cache directory download each
shard object once (counted at a proxy in front of the S3 server); `stoker prefetch` stages what a
rank reads first, so that its first steps make no shard request."""

import json
import random
import subprocess
import threading

import numpy as np
import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")

import stoker  # noqa: E402
from remote_testlib import BUCKET, Proxy, s3_env, start_moto  # noqa: E402


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
def proxy(s3, monkeypatch):
    p = Proxy(s3["port"])
    for k, v in s3_env(s3, p.endpoint).items():
        if k.startswith("AWS_"):
            monkeypatch.setenv(k, v)
    yield p
    p.close()


def run(stoker_cli, s3, endpoint, *args):
    proc = subprocess.run([stoker_cli, *map(str, args)], env=s3_env(s3, endpoint),
                          capture_output=True, text=True, timeout=300)
    assert s3["secret"] not in proc.stdout + proc.stderr
    assert proc.returncode == 0, (args, proc.stderr)
    return proc


@pytest.fixture(scope="module")
def dataset(stoker_cli, s3, tmp_path_factory):
    d = tmp_path_factory.mktemp("cache-corpus")
    rng = random.Random(4)
    with open(d / "in.jsonl", "w") as f:
        for i in range(800):
            f.write(json.dumps({"text": f"{i} " + "abcdefgh"[i % 8] * rng.randint(5, 400)}) + "\n")
    uri = f"s3://{BUCKET}/cached/ds"
    for out in (d / "local", uri):
        run(stoker_cli, s3, s3["endpoint"], "pack", d / "in.jsonl", "-o", out,
            "--shard-size", "16KiB", "--threads", "1")
    manifest = json.loads((d / "local" / "manifest.json").read_text())
    assert len(manifest["shards"]) >= 8
    return {"local": d / "local", "uri": uri, "manifest": manifest}


def batches(loader):
    return [np.asarray(b["input_ids"]).copy() for b in loader]


def shard_gets(proxy):
    return {p: n for p, n in proxy.get_paths.items() if p.endswith((".bin", ".idx"))}


def test_batches_through_the_cache_are_the_uncached_ones(dataset, proxy, tmp_path):
    kw = dict(seq_len=64, batch_size=4, num_workers=2, pin_memory=False, shuffle="block", seed=9)
    want = batches(stoker.Loader(str(dataset["local"]), **kw))
    # A budget of a few shards: smaller than the dataset, so the cache evicts and keeps going.
    loader = stoker.Loader(dataset["uri"], cache_dir=str(tmp_path / "c"), cache_size="96KiB", **kw)
    got = batches(loader)
    assert len(got) == len(want) > 0
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)
    stats = loader.stats()["storage"]
    assert stats["cache_hits"] > 0, stats
    with pytest.raises(ValueError, match="cache_size needs cache_dir"):
        stoker.Loader(dataset["uri"], cache_size="1GiB", **kw)


def test_two_processes_share_a_cache_and_download_each_shard_once(stoker_cli, s3, dataset,
                                                                  proxy, tmp_path):
    cache = tmp_path / "shared"
    args = ["bench", dataset["uri"], "--seq-len", 64, "--batch-size", 4, "--shuffle", "block",
            "--batches", 1000, "--warmup-batches", 1, "--workers", 2, "--cache-dir", cache,
            "--cache-size", "64MiB", "--json"]
    results = [None, None]

    def one(i):
        results[i] = run(stoker_cli, s3, proxy.endpoint, *args)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gets = shard_gets(proxy)
    objects = 2 * len(dataset["manifest"]["shards"])
    assert len(gets) == objects, gets  # every shard was read (1000 batches: more than an epoch)...
    assert set(gets.values()) == {1}, gets  # ...and downloaded once for both processes
    hits = [json.loads(r.stdout)["storage"]["cache_hits"] for r in results]
    assert sum(hits) > 0


def test_prefetch_stages_the_first_steps(stoker_cli, s3, dataset, proxy, tmp_path):
    cache = tmp_path / "staged"
    flags = ["--seq-len", 64, "--batch-size", 4, "--shuffle", "block", "--seed", 2,
             "--world-size", 2, "--rank", 1]
    out = run(stoker_cli, s3, proxy.endpoint, "prefetch", dataset["uri"], "--cache-dir", cache,
              "--steps", 5, *flags).stdout
    assert "staged" in out and "rank 1 of 2" in out
    staged = shard_gets(proxy)
    assert staged and set(staged.values()) == {1}
    # Staged: the same prefetch again is served from the cache, without a shard request.
    proxy.reset_counts()
    run(stoker_cli, s3, proxy.endpoint, "prefetch", dataset["uri"], "--cache-dir", cache,
        "--steps", 5, *flags)
    assert shard_gets(proxy) == {}, shard_gets(proxy)
