"""Shared by tests/python/test_integration_*.py: a small text dataset, launching a trainer's ranks
as separate processes over gloo, reading the per-step token hashes they log, and the rows of one
epoch straight from stoker.Loader (the reference every resume is checked against)."""

import hashlib
import json
import os
import random
import socket
import subprocess
import sys
from pathlib import Path

import stoker

HERE = Path(__file__).resolve().parent


def require_releases(**releases):
    """Fails the test module unless each distribution (``ai2_olmo_core="3.0.0"``: underscores
    for dashes) is installed at the release its adapter was written against, whose code it
    follows (issue 42: "pin the version in the tests")."""
    from importlib.metadata import version

    import pytest

    for name, want in releases.items():
        dist = name.replace("_", "-")
        got = version(dist)
        if got != want:
            pytest.fail(f"{dist} {got} is installed; stoker.integrations follows {dist} {want} "
                        "(scripts/requirements-dev*.txt): read the new release's code, update the "
                        "adapter and its pin", pytrace=False)


def make_text_dataset(directory, documents=240, seed=3):
    """``documents`` texts of 20 to 300 bytes, packed with the bytes tokenizer (vocabulary 257)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    words = "alpha beta gamma delta rain snow sun wind river stone tree leaf cloud".split()
    src = directory / "docs.jsonl"
    with open(src, "w") as f:
        for i in range(documents):
            text = f"doc{i} " + " ".join(rng.choice(words) for _ in range(rng.randint(3, 50)))
            f.write(json.dumps({"text": text}) + "\n")
    out = directory / "data"
    stoker.pack([str(src)], str(out), overwrite=True)
    return out


def row_hash(row):
    """One row's tokens as a short hex digest (the same for torch and NumPy int64 rows)."""
    return hashlib.sha1(bytes(memoryview(row.numpy() if hasattr(row, "numpy") else row)
                              .cast("B"))).hexdigest()[:16]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(worker, world_size, args, timeout=300, extra_env=None):
    """Runs ``python worker *args`` as ``world_size`` ranks (RANK, WORLD_SIZE, LOCAL_RANK,
    MASTER_ADDR/PORT set as torchrun does); returns each rank's CompletedProcess-like
    (returncode, output) once all have ended."""
    port = free_port()
    procs = []
    for rank in range(world_size):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false",
                   PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
        env.update(extra_env or {})
        procs.append(subprocess.Popen([sys.executable, str(HERE / worker), *map(str, args)],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    results = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        results.append((p.returncode, out))
    return results


def read_steps(log_dir, world_size):
    """{(step, rank): [records]} from the ``steps-rank*.jsonl`` files the workers append, one
    record (``rows``: the row hashes, and what else the worker logs) per micro-batch."""
    steps = {}
    for rank in range(world_size):
        path = Path(log_dir) / f"steps-rank{rank}.jsonl"
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            steps.setdefault((rec["step"], rank), []).append(rec)
    return steps


def rows_of(steps):
    """{(step, rank): [row hashes]} of read_steps' records (micro-batches in order)."""
    return {key: [h for rec in recs for h in rec["rows"]] for key, recs in steps.items()}


def epoch_rows(data, seq_len, global_rows, seed=0):
    """The row hashes of epoch 0, step by step, from one loader that holds the whole global
    batch: what any world size must serve, split among its ranks."""
    loader = stoker.Loader(str(data), seq_len=seq_len, batch_size=global_rows, seed=seed,
                           rank=0, world_size=1, num_workers=1, output="numpy")
    steps = []
    for batch in loader:  # one iteration = one epoch
        steps.append([row_hash(r) for r in batch["input_ids"]])
    loader.close()
    return steps


def torchrun(worker, nproc, args, timeout=300):
    """``torchrun --nproc-per-node nproc worker *args`` (the launcher Lightning and Fabric
    detect); returns (returncode, output)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false",
               PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc}",
           "--nnodes=1", "--master-addr=127.0.0.1", f"--master-port={free_port()}",
           str(HERE / worker), *map(str, args)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def _ok(results):
    for rc, out in results:
        assert rc == 0, out[-4000:]


def check_kill_9_resume(run, data, seq_len, tmp_path, world=2, steps=8, kill_at=5,
                        global_rows=4):
    """A run killed with SIGKILL after step ``kill_at`` (its last checkpoint: the step before)
    and its resume from the trainer's checkpoint: every step of both, on every rank, trains the
    rows an uninterrupted run trains (rank r: rows [r·B, (r+1)·B) of each global batch of the
    loader's order, docs/plan.md), and the resume starts right after the checkpoint.
    ``run(out, log, world, steps, **kw)`` returns [(returncode, output)] (one per process it
    waited for). Returns the two runs' {(step, rank): row hashes}."""
    ref = epoch_rows(data, seq_len, global_rows)
    per_rank = global_rows // world
    expected = {(s, r): ref[s - 1][r * per_rank:(r + 1) * per_rank]
                for s in range(1, steps + 1) for r in range(world)}
    killed = run(tmp_path / "b", tmp_path / "log-b1", world, steps, kill_at=kill_at)
    assert all(rc != 0 for rc, _ in killed), killed[0][1][-4000:]
    _ok(run(tmp_path / "b", tmp_path / "log-b2", world, steps, resume=True))
    b1 = rows_of(read_steps(tmp_path / "log-b1", world))
    b2 = rows_of(read_steps(tmp_path / "log-b2", world))
    ranks = range(world)
    saved = kill_at - kill_at % 2  # checkpoints every 2 steps
    assert sorted(b1) == [(s, r) for s in range(1, kill_at + 1) for r in ranks]
    assert sorted(b2) == [(s, r) for s in range(saved + 1, steps + 1) for r in ranks]
    for key in b1:
        assert b1[key] == expected[key], key
    for key in b2:
        assert b2[key] == expected[key], key
    return b1, b2


def check_elastic_resume(run, data, seq_len, tmp_path, old=2, new=3, global_rows=6,
                         kill_at=3):
    """A run on ``old`` ranks killed after step ``kill_at`` and resumed on ``new`` ranks to the
    end of the epoch: each step's rows over all ranks are the global batch of one loader
    (the same global order), and no row of the epoch is trained twice or left out."""
    ref = epoch_rows(data, seq_len, global_rows)
    epoch = len(ref)
    killed = run(tmp_path / "o", tmp_path / "log-old", old, epoch, kill_at=kill_at,
                 global_rows=global_rows)
    assert all(rc != 0 for rc, _ in killed), killed[0][1][-4000:]
    _ok(run(tmp_path / "o", tmp_path / "log-new", new, epoch, resume=True,
            global_rows=global_rows))
    before = rows_of(read_steps(tmp_path / "log-old", old))
    after = rows_of(read_steps(tmp_path / "log-new", new))
    saved = kill_at - kill_at % 2
    assert min(s for s, _ in after) == saved + 1
    served = []
    for s in range(1, epoch + 1):
        src, n = (before, old) if s <= saved else (after, new)
        rows = [h for r in range(n) for h in src[(s, r)]]
        assert sorted(rows) == sorted(ref[s - 1]), s
        served += rows
    assert sorted(served) == sorted(h for step in ref for h in step)
    assert len(set(served)) == len(served)
    return served


def runner(worker, data, seq_len, mode=None, use_torchrun=False):
    """``run(out, log, world, steps, **flags)`` for check_kill_9_resume/check_elastic_resume:
    launches ``worker`` (its ``mode`` first) on ``world`` ranks with the flags every worker takes
    (worker_arguments); a flag given True is passed bare."""
    def run(out, log, world, steps, **kw):
        args = ([mode] if mode else []) + ["--data", data, "--out", out, "--hashes", log,
                                           "--steps", steps, "--seq-len", seq_len]
        for k, v in kw.items():
            args += [f"--{k.replace('_', '-')}"] + ([] if v is True else [v])
        if use_torchrun:
            return [torchrun(worker, world, args)]
        return launch(worker, world, args)
    return run


def worker_arguments(parser):
    """The flags runner() passes; returns the parsed arguments."""
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--hashes", required=True, help="where the per-step row hashes go")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--global-rows", type=int, default=4)
    parser.add_argument("--kill-at", type=int, default=0, help="SIGKILL after this step")
    parser.add_argument("--resume", action="store_true", help="from the last checkpoint")
    return parser


class StepLog:
    """Appends one JSON line per micro-batch to HASHES/steps-rank{rank}.jsonl: the step, its
    rows' hashes and what else the worker records (read back by read_steps)."""

    def __init__(self, directory, rank):
        os.makedirs(directory, exist_ok=True)
        self.file = open(Path(directory) / f"steps-rank{rank}.jsonl", "a")

    def write(self, step, rows, **extra):
        rows = [row_hash(r) for r in (rows.cpu() if hasattr(rows, "cpu") else rows)]
        self.file.write(json.dumps({"step": step, "rows": rows, **extra}) + "\n")
        self.file.flush()
