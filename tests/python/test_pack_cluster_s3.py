"""A task-split pack with its inputs and outputs on S3 (the moto server shared by the session,
requests counted by a proxy): JSONL, .jsonl.zst and text objects matched by a glob pack with and
without tasks; the input list is taken once (OUTPUT/inputs.json) and a task reads it instead of
listing; two first tasks started together agree on one list (first writer wins, locally with
link(), on S3 with If-None-Match); a rerun of a killed task leaves no orphaned shard objects."""

import collections
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")

from remote_testlib import BUCKET, proxy_in_env, s3_session, upload_dir  # noqa: E402,F401
from test_pack import STOKER, run  # noqa: E402
from test_pack_cluster import corpus, documents, merge, pack  # noqa: E402


@pytest.fixture
def s3(s3_session, monkeypatch):
    proxy = proxy_in_env(s3_session, monkeypatch)
    yield {**s3_session, "proxy": proxy}
    proxy.close()


def download(s3, prefix, local):
    """Every object under BUCKET/prefix into `local` (to read the dataset with documents())."""
    client = s3["client"]
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        for o in page.get("Contents", []):
            path = Path(local) / o["Key"][len(prefix) + 1:]
            path.parent.mkdir(parents=True, exist_ok=True)
            client.download_file(BUCKET, o["Key"], str(path))
    return Path(local)


def keys(s3, prefix):
    out = []
    for page in s3["client"].get_paginator("list_objects_v2").paginate(Bucket=BUCKET,
                                                                       Prefix=prefix):
        out += [o["Key"][len(prefix):] for o in page.get("Contents", [])]
    return sorted(out)


def raw_corpus(tmp_path):
    """corpus()'s JSONL files, a third of them zstd-compressed, and one text file (one
    document: the whole file)."""
    src = corpus(tmp_path / "raw")
    for name in ("02.jsonl", "05.jsonl", "08.jsonl"):
        subprocess.run(["zstd", "-q", "--rm", str(src / name)], check=True)
    (src / "11.txt").write_text("textfile-doc a whole text file\nof two lines\n")
    return src


def test_s3_jsonl_glob_packs_with_and_without_tasks(tmp_path, s3):
    src = raw_corpus(tmp_path)
    upload_dir(s3["client"], src, "cluster/raw/web")
    pack(src, "-o", tmp_path / "local")
    want = documents(tmp_path / "local")
    assert len(want) == 131  # every JSONL line, the .zst files' too, and the text file
    inputs = [f"s3://{BUCKET}/cluster/raw/web/*.jsonl",
              f"s3://{BUCKET}/cluster/raw/web/*.jsonl.zst",
              f"s3://{BUCKET}/cluster/raw/web/11.txt"]
    # Without tasks, to a local output. The order is the glob's (sorted), not the directory's.
    pack(*inputs, "-o", tmp_path / "single")
    single = documents(tmp_path / "single")
    assert collections.Counter(single) == collections.Counter(want)
    # The Slurm recipe to an s3:// output, then merge there.
    job = f"s3://{BUCKET}/cluster/tok/web"
    for t in range(3):
        pack(*inputs, "-o", job, "--task-index", t, "--task-count", 3)
    assert run("merge", job).returncode == 0
    assert documents(download(s3, "cluster/tok/web", tmp_path / "job")) == single
    plan = json.loads((tmp_path / "job" / "inputs.json").read_text())
    assert {f["kind"] for f in plan["files"]} == {"jsonl", "text"}
    assert len(plan["files"]) == 11 and plan["files"][0]["path"].startswith("s3://")


def test_a_task_reads_the_recorded_list_and_lists_nothing(tmp_path, s3):
    src = raw_corpus(tmp_path)
    upload_dir(s3["client"], src, "cluster/once/raw")
    glob = [f"s3://{BUCKET}/cluster/once/raw/*.jsonl",
            f"s3://{BUCKET}/cluster/once/raw/*.jsonl.zst"]
    job = tmp_path / "job"
    s3["proxy"].reset_counts()
    pack(*glob, "-o", job, "--task-count", "4", "--list")  # the one listing of the job
    assert s3["proxy"].counts["LIST"] >= 1
    # A file that appears afterwards is not in the split, and the tasks make no LIST request.
    s3["client"].put_object(Bucket=BUCKET, Key="cluster/once/raw/99-late.jsonl",
                            Body=b'{"text": "late document"}\n')
    s3["proxy"].reset_counts()
    for t in range(4):
        pack(*glob, "-o", job, "--task-index", t, "--task-count", 4)
    assert s3["proxy"].counts["LIST"] == 0, dict(s3["proxy"].counts)
    merge(job)
    ids = [i for i, _ in documents(job)]
    assert "late" not in ids and len(ids) == 130
    # A rerun after a receipt is deleted does not pack the late file either.
    (job / "tasks" / "00003.json").unlink()
    pack(*glob, "-o", job, "--task-index", 3, "--task-count", 4)
    merge(job)
    assert [i for i, _ in documents(job)] == ids


@pytest.mark.parametrize("where", ["local", "s3"])
def test_two_first_tasks_started_together_agree_on_one_list(tmp_path, s3, where):
    """Task 0 lists the inputs and is held (STOKER_TEST_PLAN_LISTED) before recording its list;
    a file appears; task 1 lists (one more file), records its list and finishes; then task 0 is
    let go. Its write loses (first writer wins) and it packs its slice of task 1's list, so the
    receipts agree and merge succeeds. Overwriting the plan instead would leave task 1's receipt
    on another plan, which merge refuses."""
    src = corpus(tmp_path / "in", sizes=(9, 9, 9, 9))
    prefix = f"cluster/race-{where}"
    upload_dir(s3["client"], src, f"{prefix}/raw")
    glob = f"s3://{BUCKET}/{prefix}/raw/*.jsonl"
    job = str(tmp_path / "job") if where == "local" else f"s3://{BUCKET}/{prefix}/job"
    fifo = tmp_path / "listed"
    os.mkfifo(fifo)
    args = [STOKER, "pack", "--progress", "off", glob, "-o", job, "--task-count", "2"]
    first = subprocess.Popen([*args, "--task-index", "0"], env=dict(
        os.environ, STOKER_TEST_PLAN_LISTED=str(fifo)), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    opened, go = threading.Event(), threading.Event()

    def release():
        with open(fifo, "w"):  # returns once task 0 has listed and waits on the FIFO
            opened.set()
            go.wait()

    t = threading.Thread(target=release)
    t.start()
    assert opened.wait(120), "task 0 never listed"
    s3["client"].put_object(Bucket=BUCKET, Key=f"{prefix}/raw/09-new.jsonl",
                            Body=b'{"text": "new document"}\n')
    pack(glob, "-o", job, "--task-index", 1, "--task-count", 2)
    go.set()
    t.join()
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    m = run("merge", job)
    assert m.returncode == 0, m.stderr
    local = Path(job) if where == "local" else download(s3, f"{prefix}/job", tmp_path / "dl")
    receipts = [json.loads((local / "tasks" / f"0000{i}.json").read_text()) for i in (0, 1)]
    assert receipts[0]["plan_xxh3"] == receipts[1]["plan_xxh3"]
    plan = json.loads((local / "inputs.json").read_text())
    assert len(plan["files"]) == 5  # task 1's list, with the new file
    ids = [i for i, _ in documents(local)]
    assert ids.count("new") == 1 and len(ids) == 37


def test_a_rerun_of_a_killed_task_leaves_no_orphaned_objects(tmp_path, s3):
    src = corpus(tmp_path / "in")
    upload_dir(s3["client"], src, "cluster/orphans/raw")
    glob = f"s3://{BUCKET}/cluster/orphans/raw/*.jsonl"
    job = f"s3://{BUCKET}/cluster/orphans/job"
    pack(glob, "-o", job, "--task-index", 0, "--task-count", 2, "--shard-size", "4KiB")
    # Task 1 with small shards is killed after uploading them, before its receipt.
    marker = tmp_path / "killed"
    p = run("pack", "--progress", "off", glob, "-o", job, "--task-index", "1", "--task-count",
            "2", "--shard-size", "512B", env={"STOKER_TEST_KILL_TASK": f"1:{marker}"})
    assert p.returncode == -9 and marker.exists()
    killed = [k for k in keys(s3, "cluster/orphans/job/") if k.startswith("part-00001-")]
    assert len(killed) > 4
    # The rerun, with the job's shard size, writes fewer shards and deletes the others.
    s3["proxy"].reset_counts()
    pack(glob, "-o", job, "--task-index", 1, "--task-count", 2, "--shard-size", "4KiB")
    receipt = json.loads(s3["client"].get_object(
        Bucket=BUCKET, Key="cluster/orphans/job/tasks/00001.json")["Body"].read())
    written = sorted(s["prefix"] + ext for s in receipt["manifest"]["shards"]
                     for ext in (".bin", ".idx"))
    assert [k for k in keys(s3, "cluster/orphans/job/") if k.startswith("part-00001-")] == written
    assert len(written) < len(killed)
    assert s3["proxy"].counts["DELETE"] >= len(killed) - len(written)
    # A rerun with the same options overwrites the same names: nothing to delete.
    s3["client"].delete_object(Bucket=BUCKET, Key="cluster/orphans/job/tasks/00001.json")
    pack(glob, "-o", job, "--task-index", 1, "--task-count", 2, "--shard-size", "4KiB")
    assert [k for k in keys(s3, "cluster/orphans/job/") if k.startswith("part-00001-")] == written
    assert run("merge", job).returncode == 0
    pack(src, "-o", tmp_path / "single", "--shard-size", "4KiB")
    assert documents(download(s3, "cluster/orphans/job", tmp_path / "dl")) == \
        documents(tmp_path / "single")
