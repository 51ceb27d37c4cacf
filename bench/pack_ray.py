#!/usr/bin/env python3
"""Pack on a local Ray cluster against the same pack in one process with the same cores: the
scheduler's overhead per task and per GB, the cost of a rerun that skips every task, and of
`stoker merge` per task; then a paper estimate for 1,000 nodes. Not a test.

  STOKER_CLI=build/stoker .venv/bin/python bench/pack_ray.py [--mb 64] [--cores 2]
      [--tasks 2,8,32] [--merge-tasks 256] [--address HOST:PORT]

The corpus: --mb of JSONL in 64 files of varying sizes; --tokenizer bytes (default) measures the
pack pipeline, data/sample/sample.model a tokenizer-bound pack. "one process": `stoker pack --num-workers CORES`. Ray: a head and
a worker node on 127.0.0.1 with CORES/2 CPUs each (started here unless --address), and
stoker.ray.pack(num_tasks=T, num_cpus=1) — T tasks of one thread each, CORES at a time, plan
and merge included. Each figure is the best of --repeat runs (a fresh output each).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STOKER = os.environ.get("STOKER_CLI", str(REPO / "build" / "stoker"))


def make_corpus(directory, mb, files=64):
    directory.mkdir(parents=True)
    weights = [1 + (i * 37) % 11 for i in range(files)]  # 1..11: very different sizes
    total = sum(weights)
    line = json.dumps({"text": "The quick brown fox — быстрая лиса — 敏捷的狐狸. " * 12}) + "\n"
    for i, w in enumerate(weights):
        n = max(1, int(mb * 1e6 * w / total / len(line.encode())))
        (directory / f"{i:03d}.jsonl").write_text(line * n, encoding="utf-8")
    return sum(p.stat().st_size for p in directory.iterdir())


def timed(fn, repeat):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best


def start_cluster(cores):
    temp = tempfile.mkdtemp(prefix="stkbench-")
    port = str(20000 + os.getpid() % 20000)
    ray_bin = str(Path(sys.executable).parent / "ray")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    per_node = str(max(1, cores // 2))
    common = ["--num-cpus", per_node, "--node-ip-address", "127.0.0.1", "--disable-usage-stats",
              "--object-store-memory", str(128 << 20)]  # not 30% of the machine's memory
    subprocess.run([ray_bin, "start", "--head", "--port", port, "--temp-dir", temp,
                    "--include-dashboard=false", *common], check=True, env=env,
                   capture_output=True)
    subprocess.run([ray_bin, "start", "--address", f"127.0.0.1:{port}", *common], check=True,
                   env=env, capture_output=True)
    return f"127.0.0.1:{port}", temp


def stop_cluster(temp):
    # Only this cluster's processes (their command lines name its temp dir), not `ray stop`.
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if temp.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
    shutil.rmtree(temp, ignore_errors=True)


def paper_estimate(nodes=1000, cores=8, mb_s_core=50.0, corpus_tb=30.0, tasks=100_000,
                   files=100_000, receipt_get_ms=20.0, merge_s_per_task=None):
    """Requests at S3 for a task-split pack on `nodes` nodes, from the design (docs/pack.md)."""
    agg_gb_s = nodes * cores * mb_s_core / 1000
    run_s = corpus_tb * 1000 / agg_gb_s
    task_gb = corpus_tb * 1000 / tasks
    tasks_s = tasks / run_s
    pages = max(1, files // 1000)  # ListObjectsV2: 1,000 keys a page
    plan_bytes = files * 110  # one {"path", "bytes"} entry, ~110 B
    shards_per_task = max(1, int(task_gb * 1e9 / (128 << 20)) + 1)
    out = {
        "aggregate GB/s": agg_gb_s, "run s": run_s, "task GB": task_gb, "tasks finishing /s": tasks_s,
        "LIST /s, every task lists its inputs (as now)": tasks_s * pages,
        "LIST /s, tasks trust the plan (not done)": 0.0,
        "GET /s plan + receipt": 2 * tasks_s,
        "plan bytes read /s (MB)": tasks_s * plan_bytes / 1e6,
        "PUT /s shards (.bin+.idx) + receipt": tasks_s * (2 * shards_per_task + 1),
        "merge: receipt GETs": tasks, "merge: LIST pages": pages + tasks * 2 * shards_per_task // 1000,
        "merge: receipt GETs on 8 threads, s": tasks * receipt_get_ms / 1000 / 8,
    }
    if merge_s_per_task is not None:
        out["merge: local CPU per task (measured) x tasks, s"] = merge_s_per_task * tasks
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mb", type=float, default=64)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--tasks", default="2,8,32")
    ap.add_argument("--merge-tasks", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--address", default=None)
    ap.add_argument("--tokenizer", default="bytes",
                    help="bytes, or e.g. data/sample/sample.model (SentencePiece)")
    args = ap.parse_args()

    import ray

    import stoker
    import stoker.ray

    work = Path(tempfile.mkdtemp(prefix="stoker-pack-ray-"))
    temp = None
    try:
        size = make_corpus(work / "in", args.mb)
        gb = size / 1e9
        print(f"corpus: {size / 1e6:.1f} MB in 64 JSONL files; {args.cores} cores; "
              f"best of {args.repeat}\n")
        n = [0]

        def fresh():
            n[0] += 1
            return work / f"out{n[0]}"

        single = timed(lambda: subprocess.run(
            [STOKER, "pack", "--progress", "off", str(work / "in"), "-o", str(fresh()),
             "--num-workers", str(args.cores), "--tokenizer", args.tokenizer], check=True,
            capture_output=True), args.repeat)
        print(f"{'run':32} {'s':>7} {'MB/s':>7} {'vs 1 process':>13} {'overhead/task':>14} "
              f"{'overhead/GB':>12}")
        print(f"{'one process, --num-workers ' + str(args.cores):32} {single:7.2f} "
              f"{size / 1e6 / single:7.1f} {1.0:13.2f}")
        if args.address:
            address = args.address
        else:
            address, temp = start_cluster(args.cores)
        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        # Warm the workers (their first start is a one-time cost of the cluster, not of a pack).
        stoker.ray.pack(work / "in", fresh(), args.tokenizer, num_tasks=args.cores,
                        progress=False)
        for t in [int(x) for x in args.tasks.split(",")]:
            out = []

            def go():
                out.append(fresh())
                stoker.ray.pack(work / "in", out[-1], args.tokenizer, num_tasks=t, num_cpus=1,
                                progress=False)
            dt = timed(go, args.repeat)
            over = dt - single
            print(f"{'stoker.ray.pack, ' + str(t) + ' tasks':32} {dt:7.2f} {size / 1e6 / dt:7.1f} "
                  f"{single / dt:13.2f} {over / t * 1000:11.0f} ms {over / gb:10.1f} s")
            rerun = timed(lambda: stoker.ray.pack(work / "in", out[-1], args.tokenizer,
                                                  num_tasks=t, progress=False), args.repeat)
            print(f"{'  rerun, every task skipped':32} {rerun:7.2f} {'':7} {'':13} "
                  f"{rerun / t * 1000:11.0f} ms")
        # Merge per task: a job of many small tasks (the Slurm recipe with the CLI).
        m = args.merge_tasks
        job = fresh()
        small = work / "small"
        small.mkdir()
        for i in range(m):
            (small / f"{i:05d}.jsonl").write_text(json.dumps({"text": f"doc {i}"}) + "\n")
        for i in range(m):
            subprocess.run([STOKER, "pack", "--progress", "off", str(small), "-o", str(job),
                            "--task-index", str(i), "--task-count", str(m), "--num-workers", "1"],
                           check=True, capture_output=True)
        merge_s = timed(lambda: subprocess.run([STOKER, "merge", str(job)], check=True,
                                               capture_output=True), args.repeat)
        print(f"\nstoker merge of {m} tasks (local): {merge_s:.3f} s, "
              f"{merge_s / m * 1e3:.2f} ms per task")
        print("\npaper estimate, 1,000 nodes x 8 cores x 50 MB/s, 30 TB in 100,000 files, "
              "100,000 tasks:")
        for k, v in paper_estimate(merge_s_per_task=merge_s / m).items():
            print(f"  {k:50} {v:14,.1f}")
    finally:
        if ray.is_initialized():
            ray.shutdown()
        if temp:
            stop_cluster(temp)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
