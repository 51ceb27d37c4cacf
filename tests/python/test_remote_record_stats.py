"""Loader.stats()["storage"] and `stoker bench --json` for record datasets read from S3 (moto,
IAM auth on) through a counting proxy: WebDataset (a glob: one ListObjectsV2), TFRecord, MDS (an
index.json) and Parquet, streamed with stoker.Stream. The loader's counts are the requests the
proxy saw, by kind, and its bytes the GET bodies the proxy sent; under injected 500s every retry
is counted. Each dataset is written by its format's reference writer."""

import json
import subprocess

import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")
pytest.importorskip("webdataset")

import stoker  # noqa: E402
from remote_testlib import BUCKET, Proxy, s3_env, s3_session, upload_dir  # noqa: E402,F401
from test_stream_records import (TEXTS, write_mds, write_parquet, write_tfrecord,  # noqa: E402
                                 write_wds)

KINDS = ("GET", "HEAD", "LIST", "PUT")


@pytest.fixture
def s3(s3_session, monkeypatch):
    def start(**faults):
        proxy = Proxy(s3_session["port"], seed=7, **faults)
        proxies.append(proxy)
        for k, v in s3_env(s3_session, proxy.endpoint).items():
            if k.startswith("AWS_"):
                monkeypatch.setenv(k, v)
        return proxy

    proxies = []
    yield {**s3_session, "start": start}
    for p in proxies:
        p.close()


def upload(s3, local_dir, prefix):
    upload_dir(s3["client"], local_dir, prefix)
    return f"s3://{BUCKET}/{prefix}"


def stream_loader(inputs, text_field):
    stream = stoker.Stream(inputs, tokenizer="bytes", text_field=text_field, shuffle_buffer=16)
    return stoker.Loader(stream, seq_len=256, batch_size=2, num_workers=2, pack="pad", seed=3,
                         output="numpy", rank=0, world_size=1, pin_memory=False)


def read_all(loader):
    return sum(int(b["input_ids"].size) for b in loader)


def assert_matches_proxy(storage, proxy):
    seen = {k: proxy.counts.get(k, 0) for k in KINDS}
    assert storage["requests"] == seen, (storage, dict(proxy.counts))
    assert storage["bytes_read"] == proxy.get_bytes
    assert storage["retries"] == sum(proxy.faults.values())
    assert storage["failed_requests"] == sum(proxy.faults.values())


@pytest.mark.parametrize("fmt", ["webdataset", "tfrecord", "mds", "parquet"])
def test_stream_stats_are_the_requests_the_server_saw(tmp_path, s3, fmt):
    d = tmp_path / fmt
    d.mkdir()
    if fmt == "webdataset":
        write_wds(d, TEXTS)
        inputs, field, heads = lambda uri: [f"{uri}/shard-*.tar"], "txt", 0
    elif fmt == "tfrecord":
        names = [p.name for p in write_tfrecord(d, TEXTS)]
        inputs, field, heads = lambda uri: [f"{uri}/{n}" for n in names], "text", len(names)
    elif fmt == "mds":
        write_mds(d, TEXTS)
        inputs, field, heads = lambda uri: [f"{uri}/mds"], "text", 1
    else:
        pytest.importorskip("pyarrow")
        names = [p.name for p in write_parquet(d, TEXTS)]
        inputs, field, heads = lambda uri: [f"{uri}/{n}" for n in names], "text", len(names)
    uri = upload(s3, d, f"stats/{fmt}")
    proxy = s3["start"]()
    loader = stream_loader(inputs(uri), field)
    assert read_all(loader) > 0
    storage = loader.stats()["storage"]
    assert storage["requests"]["GET"] > 0
    assert storage["bytes_read"] > 0
    assert_matches_proxy(storage, proxy)
    # A glob is listed once and its shards open with their listed sizes; a named shard costs
    # one HEAD (its size); an MDS index.json one HEAD and one GET, its shards none.
    assert storage["requests"]["LIST"] == (1 if fmt == "webdataset" else 0)
    assert storage["requests"]["HEAD"] == heads


def test_retries_under_injected_failures_are_counted(tmp_path, s3):
    write_wds(tmp_path, TEXTS)
    uri = upload(s3, tmp_path, "stats/faulty")
    proxy = s3["start"](fail=0.25)
    loader = stream_loader([f"{uri}/shard-*.tar"], "txt")
    assert read_all(loader) > 0
    storage = loader.stats()["storage"]
    assert sum(proxy.faults.values()) > 0
    assert_matches_proxy(storage, proxy)


def test_bench_json_reports_a_streamed_remote_dataset(tmp_path, s3, stoker_cli):
    write_wds(tmp_path, TEXTS)
    uri = upload(s3, tmp_path, "stats/bench")
    proxy = s3["start"]()
    proc = subprocess.run(
        [stoker_cli, "bench", "--stream", f"{uri}/shard-*.tar", "--tokenizer", "bytes",
         "--text-field", "txt", "--seq-len", "256", "--batch-size", "2", "--num-workers", "2",
         "--batches", "5", "--pack", "pad", "--json"],
        env=s3_env(s3, proxy.endpoint), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert s3["secret"] not in proc.stdout + proc.stderr
    storage = json.loads(proc.stdout)["storage"]
    assert storage["requests"]["GET"] > 0 and storage["requests"]["LIST"] == 1
    assert_matches_proxy(storage, proxy)
