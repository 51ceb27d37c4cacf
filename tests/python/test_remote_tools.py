"""`stoker merge`, `stoker index` and `stoker pack --format webdataset|tfrecord` with s3:// datasets
on a moto server (IAM auth on). Merge and index read only metadata — manifests, .idx files, one
listing per shard directory — and never a .bin (counted at a proxy); what they write equals what
the same command writes on local disk, and the Loader's batches from the remote result equal the
local ones. The record-format packs upload what a local pack writes, records.json last."""

import json

import numpy as np
import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")

import stoker  # noqa: E402
from records_testlib import dump, run  # noqa: E402
from remote_testlib import BUCKET, proxy_in_env, s3_session, upload_dir  # noqa: E402,F401


@pytest.fixture
def s3(s3_session, monkeypatch):
    proxy = proxy_in_env(s3_session, monkeypatch)
    yield {**s3_session, "proxy": proxy}
    proxy.close()


def ok(*args):
    p = run(*args)
    assert p.returncode == 0, (args, p.stderr)
    assert "AWS_SECRET" not in p.stderr
    return p


def corpus(path, n=400):
    with open(path, "w") as f:
        for i in range(n):
            f.write(json.dumps({"text": f"doc {i} " + "ключ " * (i % 40)}) + "\n")
    return path


def get(s3, key):
    return s3["client"].get_object(Bucket=BUCKET, Key=key)["Body"].read()


def keys(s3, prefix):
    pages = s3["client"].get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return sorted(o["Key"][len(prefix):] for p in pages for o in p.get("Contents", []))


def batches(source, n=8):
    # No cache: these tests compare batches; the cache's own tests are test_remote_cache.py.
    ld = stoker.Loader(source, seq_len=64, batch_size=4, num_workers=1, pin_memory=False,
                       shuffle="block", seed=3, output="numpy", cache_dir=None)
    out = []
    for b in ld:
        out.append({k: np.asarray(v).copy() for k, v in b.items()})
        if len(out) == n:
            break
    return out


def assert_same(a, b):
    assert len(a) == len(b) > 0
    for x, y in zip(a, b):
        for k in x:
            np.testing.assert_array_equal(x[k], y[k], err_msg=k)


def test_merge_of_s3_parts_reads_no_shard_and_equals_the_local_merge(tmp_path, s3):
    # Two datasets, joined in the order given.
    src = [corpus(tmp_path / "a.jsonl"), corpus(tmp_path / "b.jsonl", n=300)]
    pack = ["pack", "--progress", "off", "--shard-size", "4KiB"]
    for t in (0, 1):
        ok(*pack, src[t], "-o", tmp_path / f"part-{t}")
        ok(*pack, src[t], "-o", f"s3://{BUCKET}/merge/part-{t}")
    ok("merge", tmp_path / "part-1", tmp_path / "part-0", "-o", tmp_path / "all")
    s3["proxy"].reset_counts()
    out = ok("merge", f"s3://{BUCKET}/merge/part-1", f"s3://{BUCKET}/merge/part-0",
             "-o", f"s3://{BUCKET}/merge/all").stdout
    assert "merge: 2 part(s)" in out
    assert not [p for p in s3["proxy"].get_paths if p.endswith(".bin")], s3["proxy"].get_paths
    assert s3["proxy"].counts["LIST"] == 2, s3["proxy"].counts
    local = json.loads((tmp_path / "all" / "manifest.json").read_text())
    remote = json.loads(get(s3, "merge/all/manifest.json"))
    assert remote["shards"] == local["shards"] and remote["length_index"] == local["length_index"]
    assert get(s3, "merge/all/" + local["length_index"]["file"]) == \
        (tmp_path / "all" / local["length_index"]["file"]).read_bytes()
    assert keys(s3, "merge/all/") == sorted(["manifest.json", local["length_index"]["file"]])
    assert_same(batches(f"s3://{BUCKET}/merge/all"), batches(str(tmp_path / "all")))
    ok("verify", f"s3://{BUCKET}/merge/all")
    # Refused: a dataset already there, a local part with a remote output.
    again = run("merge", f"s3://{BUCKET}/merge/part-0", f"s3://{BUCKET}/merge/part-1",
                "-o", f"s3://{BUCKET}/merge/all")
    assert again.returncode == 2 and "already there" in again.stderr, again.stderr
    mixed = run("merge", tmp_path / "part-0", f"s3://{BUCKET}/merge/part-1",
                "-o", f"s3://{BUCKET}/merge/mixed")
    assert mixed.returncode == 2 and "s3://" in mixed.stderr, mixed.stderr


def test_merge_names_a_missing_remote_shard(tmp_path, s3):
    ok("pack", "--progress", "off", corpus(tmp_path / "in.jsonl"), "--shard-size", "4KiB",
       "-o", tmp_path / "ds")
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    upload_dir(s3["client"], tmp_path / "ds", "broken/ds")
    gone = manifest["shards"][1]["prefix"] + ".bin"
    s3["client"].delete_object(Bucket=BUCKET, Key="broken/ds/" + gone)
    p = run("merge", f"s3://{BUCKET}/broken/ds", "-o", f"s3://{BUCKET}/broken/all")
    assert p.returncode == 2 and f"s3://{BUCKET}/broken/ds/{gone}" in p.stderr, p.stderr
    assert keys(s3, "broken/all/") == []


def test_index_of_an_s3_dataset_equals_the_local_index(tmp_path, s3):
    ok("pack", "--progress", "off", corpus(tmp_path / "in.jsonl"), "--shard-size", "4KiB",
       "-o", tmp_path / "ds")
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    index_file = manifest.pop("length_index")["file"]
    (tmp_path / "ds" / index_file).unlink()
    (tmp_path / "ds" / "manifest.json").write_text(json.dumps(manifest))
    upload_dir(s3["client"], tmp_path / "ds", "idx/ds")
    uri = f"s3://{BUCKET}/idx/ds"
    check = run("index", "--check", uri)
    assert check.returncode == 1 and "no length index" in check.stderr, check.stderr
    s3["proxy"].reset_counts()
    assert "index: wrote" in ok("index", uri).stdout
    assert not [p for p in s3["proxy"].get_paths if p.endswith(".bin")]
    assert s3["proxy"].counts["PUT"] == 2, s3["proxy"].counts  # the index, then the manifest
    ok("index", tmp_path / "ds")
    assert get(s3, f"idx/ds/{index_file}") == (tmp_path / "ds" / index_file).read_bytes()
    assert json.loads(get(s3, "idx/ds/manifest.json")) == \
        json.loads((tmp_path / "ds" / "manifest.json").read_text())
    assert "index: ok:" in ok("index", "--check", uri).stdout
    # Planning now costs the manifest and the index, nothing per shard.
    s3["proxy"].reset_counts()
    ok("plan", uri, "--seq-len", 64, "--batch-size", 2, "--steps", 2)
    assert dict(s3["proxy"].counts) == {"HEAD": 1, "GET": 2}, s3["proxy"].counts


def test_pack_webdataset_and_tfrecord_to_s3_upload_the_local_files(tmp_path, s3):
    src = tmp_path / "files"
    src.mkdir()
    for i in range(30):
        (src / f"s{i:03d}.txt").write_text(f"caption {i} ключ")
        (src / f"s{i:03d}.bin").write_bytes(bytes([i]) * (i * 50))
    args = ["pack", "--progress", "off", "--format", "webdataset", src, "--shard-size", "8KiB"]
    ok(*args, "-o", tmp_path / "wds")
    s3["proxy"].reset_counts()
    ok(*args, "-o", f"s3://{BUCKET}/wds-out")
    names = sorted(p.name for p in (tmp_path / "wds").iterdir())
    assert len(names) > 3 and keys(s3, "wds-out/") == names
    for n in names:
        if n.endswith(".tar"):
            assert get(s3, f"wds-out/{n}") == (tmp_path / "wds" / n).read_bytes(), n
    assert dump(f"s3://{BUCKET}/wds-out/shard-*.tar") == dump(str(tmp_path / "wds"),
                                                              input_format="webdataset")
    again = run(*args, "-o", f"s3://{BUCKET}/wds-out")
    assert again.returncode == 2 and "already there" in again.stderr, again.stderr

    corp = corpus(tmp_path / "in.jsonl", n=100)
    targs = ["pack", "--progress", "off", "--format", "tfrecord", corp, "--shard-size", "8KiB"]
    ok(*targs, "-o", tmp_path / "tf")
    ok(*targs, "-o", f"s3://{BUCKET}/tf-out")
    local = sorted(p.name for p in (tmp_path / "tf" / "tfrecord").iterdir())
    assert [k for k in keys(s3, "tf-out/tfrecord/")] == local
    for n in local:
        if n.endswith(".tfrecord"):
            assert get(s3, f"tf-out/tfrecord/{n}") == (tmp_path / "tf" / "tfrecord" / n).read_bytes()
    assert "manifest.json" in keys(s3, "tf-out/")


def test_task_split_pack_to_s3_with_receipts_then_merge(tmp_path, s3):
    """The Slurm recipe with an s3:// output: shards then one PUT of the receipt per task; a rerun
    writes nothing; merge reads the plan, the receipts and the .idx files (never a .bin) and
    names a task whose receipt is gone."""
    src = [corpus(tmp_path / "a.jsonl"), corpus(tmp_path / "b.jsonl", n=300),
           corpus(tmp_path / "c.jsonl", n=50)]
    job = f"s3://{BUCKET}/tasks/job"
    pack = ["pack", "--progress", "off", *src, "--shard-size", "4KiB", "--task-count", "3"]
    listing = ok(*pack, "-o", job, "--list").stdout
    assert listing.count("\ntask ") == 3 and "3 task(s)" in listing
    for t in range(3):
        ok(*pack, "--task-index", t, "-o", job)
        ok(*pack, "--task-index", t, "-o", tmp_path / "job")
    ok("merge", tmp_path / "job")
    s3["proxy"].reset_counts()
    assert "merge: 3 task(s)" in ok("merge", job).stdout
    assert not [p for p in s3["proxy"].get_paths if p.endswith(".bin")], s3["proxy"].get_paths
    local = json.loads((tmp_path / "job" / "manifest.json").read_text())
    assert json.loads(get(s3, "tasks/job/manifest.json")) == local
    for name in ["inputs.json", *(f"tasks/{t:05d}.json" for t in range(3)),
                 *(s["prefix"] + ext for s in local["shards"] for ext in (".bin", ".idx"))]:
        assert get(s3, "tasks/job/" + name) == (tmp_path / "job" / name).read_bytes(), name
    assert_same(batches(job), batches(str(tmp_path / "job")))
    # A rerun of every task finds its receipt and writes nothing.
    s3["proxy"].reset_counts()
    for t in range(3):
        assert "nothing to do" in ok(*pack, "--task-index", t, "-o", job).stdout
    assert s3["proxy"].counts["PUT"] == 0, s3["proxy"].counts
    # A task whose receipt is gone is named by merge, and its rerun is the only one that packs.
    s3["client"].delete_object(Bucket=BUCKET, Key="tasks/job/tasks/00001.json")
    p = run("merge", job)
    assert p.returncode == 2 and "task 1 of 3 has no receipt" in p.stderr, p.stderr
    outs = [ok(*pack, "--task-index", t, "-o", job).stdout for t in range(3)]
    assert ["nothing to do" in o for o in outs] == [True, False, True]
    ok("merge", job)
    assert json.loads(get(s3, "tasks/job/manifest.json")) == local
