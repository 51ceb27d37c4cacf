"""stoker.ray.pack on a real Ray cluster on loopback, started once per test session: a head node
and one more worker node process (`ray start`), one CPU each. A task whose worker is killed
mid-task (before its receipt) is retried by Ray and the dataset is byte-identical to an
undisturbed run (the Slurm recipe with the CLI); a second run skips every task; deleting one
receipt reruns that task only; an s3:// output on the moto server."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("boto3")
pytest.importorskip("moto")

import stoker  # noqa: E402
import stoker.ray  # noqa: E402
from remote_testlib import BUCKET, free_port, s3_env, s3_session  # noqa: E402,F401
from test_pack_cluster import corpus, documents, merge, slurm_array, tree  # noqa: E402

# The `ray` script of this interpreter's environment (a virtualenv's bin/), else the PATH's.
RAY = shutil.which("ray", path=os.path.dirname(sys.executable)) or shutil.which("ray")


def _our_processes(marker):
    """Pids of the processes whose command line mentions `marker` (our cluster's temp dir)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(entry))
        except OSError:
            pass
    return pids


@pytest.fixture(scope="session")
def ray_cluster():
    """A head node and a second node on 127.0.0.1 (1 CPU each); yields the address. Stopped by
    killing the processes of this cluster only (those under its own temp dir), not `ray stop`,
    which would stop every Ray cluster of the user."""
    temp = tempfile.mkdtemp(prefix="stkray-")  # short: Ray's socket paths must fit 107 bytes
    port = free_port()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--num-cpus", "1", "--node-ip-address", "127.0.0.1", "--disable-usage-stats",
              "--object-store-memory", str(128 << 20)]  # not 30% of the machine's memory
    try:
        subprocess.run([RAY, "start", "--head", "--port", str(port), "--temp-dir", temp,
                        "--include-dashboard=false", *common], check=True, env=env,
                       capture_output=True, timeout=180)
        subprocess.run([RAY, "start", "--address", f"127.0.0.1:{port}", *common], check=True,
                       env=env, capture_output=True, timeout=180)
        ray.init(address=f"127.0.0.1:{port}", logging_level="ERROR", log_to_driver=False)
        yield f"127.0.0.1:{port}"
    finally:
        if ray.is_initialized():
            ray.shutdown()
        pids = _our_processes(temp)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(temp, ignore_errors=True)


def test_killed_worker_retried_byte_identical_then_skips_then_reruns_one_task(
        tmp_path, ray_cluster):
    src = corpus(tmp_path / "in")
    # The undisturbed run: the Slurm recipe with the CLI.
    slurm_array([src], tmp_path / "clean", 4, "--shard-size", "2KiB")
    merge(tmp_path / "clean")
    job = tmp_path / "job"
    marker = tmp_path / "killed"
    seen = []
    manifest = stoker.ray.pack(
        src, job, num_tasks=4, shard_size="2KiB", max_retries=2,
        progress=lambda done, total, r: seen.append(r),
        ray_options={"runtime_env": {"env_vars": {"STOKER_TEST_KILL_TASK": f"1:{marker}"}}})
    assert marker.exists()  # task 1's worker was killed before its receipt, and Ray retried it
    assert sorted(r["task"] for r in seen) == [0, 1, 2, 3] and not any(r["skipped"] for r in seen)
    # Each task reports its own time, and the retried one says so.
    assert [r["task"] for r in seen if r["retry"]] == [1]
    assert all(r["task_s"] > 0 for r in seen)
    assert tree(job) == tree(tmp_path / "clean")
    assert manifest == json.loads((job / "manifest.json").read_text())
    # A second run skips every task.
    seen.clear()
    assert stoker.ray.pack(src, job, num_tasks=4, shard_size="2KiB",
                           progress=lambda d, t, r: seen.append(r)) == manifest
    assert sorted(r["task"] for r in seen if r["skipped"]) == [0, 1, 2, 3]
    # Deleting one receipt reruns that task only.
    (job / "tasks" / "00002.json").unlink()
    seen.clear()
    stoker.ray.pack(src, job, num_tasks=4, shard_size="2KiB",
                    progress=lambda d, t, r: seen.append(r))
    assert [r["task"] for r in seen if not r["skipped"]] == [2]
    assert tree(job) == tree(tmp_path / "clean")


def test_s3_output(tmp_path, ray_cluster, s3_session, monkeypatch):
    src = corpus(tmp_path / "in", sizes=(9, 3, 14, 2, 7))
    env = {k: v for k, v in s3_env(s3_session).items() if k.startswith("AWS_")}
    for k, v in env.items():  # the driver plans and merges; the tasks get them as runtime_env
        monkeypatch.setenv(k, v)
    manifest = stoker.ray.pack(src, f"s3://{BUCKET}/ray/job", num_tasks=3, shard_size="1KiB",
                               progress=False, ray_options={"runtime_env": {"env_vars": env}})
    slurm_array([src], tmp_path / "local", 3, "--shard-size", "1KiB")
    local = merge(tmp_path / "local")
    assert manifest["shards"] == local["shards"]
    client = s3_session["client"]
    body = client.get_object(Bucket=BUCKET, Key="ray/job/manifest.json")["Body"].read()
    assert json.loads(body) == manifest
    for s in manifest["shards"]:
        key = f"ray/job/{s['prefix']}.bin"
        got = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        assert got == (tmp_path / "local" / f"{s['prefix']}.bin").read_bytes()
    assert documents(tmp_path / "local")


def test_relative_paths_are_resolved_on_the_driver(tmp_path, ray_cluster, monkeypatch):
    # The workers run in the directory where `ray start` ran; the driver's relative paths still
    # name the driver's files.
    corpus(tmp_path / "in", sizes=(4, 6, 3))
    slurm_array([tmp_path / "in"], tmp_path / "clean", 2)
    merge(tmp_path / "clean")
    monkeypatch.chdir(tmp_path)
    manifest = stoker.ray.pack("in", "job", num_tasks=2, progress=False)
    assert manifest["shards"] and tree(tmp_path / "job") == tree(tmp_path / "clean")


def test_num_cpus_larger_than_any_node_is_refused(tmp_path, ray_cluster):
    corpus(tmp_path / "in", sizes=(2,))
    with pytest.raises(ValueError, match="num_cpus=8: no node of this Ray cluster has more than 1 "
                                         "CPUs"):
        stoker.ray.pack(tmp_path / "in", tmp_path / "job", num_tasks=2, num_cpus=8)
