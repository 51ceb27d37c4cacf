#!/usr/bin/env python3
"""`stoker bench` of this build against an earlier commit's, side by side (issue 41, section 5).

Builds BASE (a commit, tag or branch) in a git worktree of its own under --work, configured with
the flags of this checkout's build (CMakeCache.txt: build type, compilers and their flags, unity
build, launcher, Arrow, CUDA, sanitizers), only the `stoker` target. Writes the token data once
(bench_data.write_megatron: Megatron uint16, log-normal document lengths, as bench/peers/), then
runs both `stoker bench DATA --seq-len S --batch-size B --num-workers W --shuffle global --json`
interleaved --rounds times (the order alternates each round) and prints tokens/s and CPU ms per
million tokens for each, round by round and as ranges, with the load average before and after.

Wall-clock figures move with whatever else runs on the machine. --callgrind N counts instructions
instead (valgrind --tool=callgrind, 1 worker; repeatable under any load): each binary runs N and 2N
measured batches, and the difference divided by N is the instructions per batch (open, plan and
warm-up cancel out). --annotate K also compares the two function by function (self instructions
per batch, callgrind_annotate) and prints the K that differ most.

NEW is this checkout's --build (default build/; build its `stoker` target first), or --new REV
(built like BASE).

  bench/compare_commits.py e24a8b2                       # 3 rounds of 10 s, 100 M tokens
  bench/compare_commits.py e24a8b2 --callgrind 200 --annotate 20  # instructions per batch
  bench/compare_commits.py e24a8b2 --new 22f6e6c --rounds 5

The worktrees stay under --work (default /tmp/stoker-compare) so a rerun does not rebuild; remove
one with `git worktree remove --force DIR`. Needs numpy (the data) and, for --callgrind, valgrind.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_data import write_megatron  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

# CMake cache entries that decide the code a build produces: copied to BASE's configure.
COPIED = [
    "CMAKE_BUILD_TYPE", "CMAKE_C_COMPILER", "CMAKE_CXX_COMPILER", "CMAKE_C_FLAGS",
    "CMAKE_CXX_FLAGS", "CMAKE_EXE_LINKER_FLAGS", "CMAKE_SHARED_LINKER_FLAGS",
    "CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER", "STOKER_UNITY_BUILD",
    "STOKER_ARROW", "STOKER_ARROW_PYTHON", "STOKER_CUDA", "STOKER_SANITIZE",
]


def read_cache(build):
    cache = {}
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z_0-9]+):[A-Z]+=(.*)$", line)
        if m:
            cache[m.group(1)] = m.group(2)
    return cache


def configure_args(ref):
    """-D options that give BASE the reference build's flags."""
    args = ["-G", ref.get("CMAKE_GENERATOR", "Ninja")]
    btype = ref.get("CMAKE_BUILD_TYPE", "")
    names = COPIED + ([f"CMAKE_C_FLAGS_{btype.upper()}", f"CMAKE_CXX_FLAGS_{btype.upper()}"]
                      if btype else [])
    for name in names:
        if name in ref:
            args.append(f"-D{name}={ref[name]}")
    # The Arrow probe looks for <source>/.venv/bin/python, which a fresh worktree has not.
    if ref.get("STOKER_ARROW", "AUTO") != "OFF" and not ref.get("STOKER_ARROW_PYTHON"):
        venv = REPO / ".venv/bin/python"
        args.append(f"-DSTOKER_ARROW_PYTHON={venv if venv.exists() else sys.executable}")
    return args + ["-DSTOKER_BUILD_TESTS=OFF", "-DSTOKER_BUILD_BENCH=OFF",
                   "-DSTOKER_BUILD_PYTHON=OFF", "-DSTOKER_BUILD_FUZZ=OFF"]


def run(cmd, **kw):
    print("+ " + " ".join(str(c) for c in cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, **kw)


def build_commit(rev, ref_cache, work, jobs):
    """The `stoker` binary of commit `rev`, built in its own worktree under `work`."""
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", rev + "^{commit}"],
                         check=True, capture_output=True, text=True).stdout.strip()
    tree = work / f"tree-{sha[:12]}"
    if not (tree / ".git").exists():
        run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), sha])
    build = tree / "build"
    if not (build / "CMakeCache.txt").exists():
        run(["cmake", "-S", str(tree), "-B", str(build)] + configure_args(ref_cache),
            stdout=subprocess.DEVNULL)
    run(["cmake", "--build", str(build), "-j", str(jobs), "--target", "stoker"],
        stdout=subprocess.DEVNULL)
    return build / "stoker", sha[:12]


def bench_cmd(stoker, data, a, workers, extra):
    # The worker-count flag is --num-workers since the options were unified (--workers before).
    help_text = subprocess.run([str(stoker), "bench", "--help"], capture_output=True,
                               text=True).stdout
    wflag = "--num-workers" if "--num-workers" in help_text else "--workers"
    return [str(stoker), "bench", str(data), "--seq-len", str(a.seq_len), "--batch-size",
            str(a.batch_size), wflag, str(workers), "--shuffle", a.shuffle, "--seed",
            str(a.seed), "--json"] + extra


def bench_once(cmd, env):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    j = json.loads(out.strip().splitlines()[-1])
    return j["tokens_per_s"], 1e3 * j["cpu_s"] / (j["tokens"] / 1e6)


def callgrind_ir(cmd, env, out_file):
    run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"] + cmd, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for line in Path(out_file).read_text().splitlines():
        if line.startswith("summary:") or line.startswith("totals:"):
            return int(line.split()[1])
    raise RuntimeError(f"{out_file}: no summary line")


def self_costs(out_file):
    """Self instructions per function of a callgrind output, by name (file paths dropped: they
    differ between worktrees and ccache hits)."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", str(out_file)],
                          check=True, capture_output=True, text=True).stdout
    costs = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+) \([ \d.]+%\)\s+(.*)$", line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        name = re.sub(r" \[[^\]]*\]$", "", re.sub(r"^[^ ]*?:", "", m.group(2), count=1))
        costs[name] = costs.get(name, 0) + int(m.group(1).replace(",", ""))
    return costs


def span(values, fmt):
    return f"{fmt(min(values))}-{fmt(max(values))} (median {fmt(statistics.median(values))})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="the earlier commit (hash, tag or branch)")
    ap.add_argument("--new", help="a commit for the other side (default: --build's stoker)")
    ap.add_argument("--build", default="build", help="this checkout's build directory")
    ap.add_argument("--work", default="/tmp/stoker-compare", help="worktrees and data")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="build jobs")
    ap.add_argument("--tokens", type=int, default=100_000_000)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shuffle", default="global")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--warmup-batches", type=int, default=20)
    ap.add_argument("--callgrind", type=int, metavar="N",
                    help="count instructions per batch (N and 2N batches, 1 worker) instead")
    ap.add_argument("--annotate", type=int, default=0, metavar="K",
                    help="with --callgrind: the K functions whose self Ir per batch differ most")
    a = ap.parse_args()

    work = Path(a.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    ref_build = (REPO / a.build).resolve()
    ref_cache = read_cache(ref_build)
    base_bin, base_name = build_commit(a.base, ref_cache, work, a.jobs)
    if a.new:
        new_bin, new_name = build_commit(a.new, ref_cache, work, a.jobs)
    else:
        new_bin = ref_build / "stoker"
        head = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                              capture_output=True, text=True).stdout.strip()
        new_name = f"{ref_build.name} ({head})"
        if not new_bin.exists():
            sys.exit(f"{new_bin} is missing: cmake --build {a.build} --target stoker")
    data = work / f"data/megatron-{a.tokens}"
    write_megatron(str(data), a.tokens)
    env = dict(os.environ, STOKER_CACHE_DIR=str(work / "cache"))
    sides = [(base_name, base_bin), (new_name, new_bin)]
    config = (f"{a.tokens:,} tokens, seq {a.seq_len}, batch {a.batch_size}, shuffle {a.shuffle}, "
              f"seed {a.seed}")

    if a.callgrind:
        if shutil.which("valgrind") is None:
            sys.exit("--callgrind needs valgrind")
        print(f"instructions per batch (callgrind, 1 worker, {config}; "
              f"{a.callgrind} and {2 * a.callgrind} batches)")
        per_batch, functions = {}, {}
        for name, binary in sides:
            runs = []
            for n in (a.callgrind, 2 * a.callgrind):
                cmd = bench_cmd(binary, data, a, 1, ["--batches", str(n)])
                out = work / f"callgrind.{name.split()[0]}.{n}.out"
                runs.append((out, callgrind_ir(cmd, env, out)))
            per_batch[name] = (runs[1][1] - runs[0][1]) / a.callgrind
            print(f"  {name:>24}: {per_batch[name]:,.0f} Ir per batch "
                  f"({per_batch[name] / (a.batch_size * a.seq_len):.2f} per token)")
            if a.annotate:
                c1, c2 = self_costs(runs[0][0]), self_costs(runs[1][0])
                functions[name] = {k: (c2.get(k, 0) - c1.get(k, 0)) / a.callgrind
                                   for k in set(c1) | set(c2)}
        if a.annotate:
            fb, fn = functions[base_name], functions[new_name]
            keys = sorted(set(fb) | set(fn), key=lambda k: -abs(fn.get(k, 0) - fb.get(k, 0)))
            print(f"  self Ir per batch, the {a.annotate} functions that differ most:")
            print(f"  {'base':>10} {'new':>10} {'new-base':>10}  function")
            for k in keys[:a.annotate]:
                print(f"  {fb.get(k, 0):10,.0f} {fn.get(k, 0):10,.0f} "
                      f"{fn.get(k, 0) - fb.get(k, 0):10,.0f}  {k[:110]}")
        ratio = per_batch[new_name] / per_batch[base_name]
        print(f"  {new_name} / {base_name}: {ratio:.4f}")
        return

    results = {name: [] for name, _ in sides}
    load0 = os.getloadavg()
    for r in range(a.rounds):
        order = sides if r % 2 == 0 else sides[::-1]
        for name, binary in order:
            cmd = bench_cmd(binary, data, a, a.workers,
                            ["--seconds", str(a.seconds), "--warmup-batches",
                             str(a.warmup_batches)])
            tps, cpu = bench_once(cmd, env)
            results[name].append((tps, cpu))
            print(f"round {r + 1} {name}: {tps / 1e6:.1f} M tokens/s, {cpu:.3f} CPU ms per M "
                  f"tokens", file=sys.stderr, flush=True)
    load1 = os.getloadavg()
    print(f"stoker bench, {config}, {a.workers} workers, {a.rounds} rounds of {a.seconds:g} s "
          f"interleaved; load average {load0[0]:.1f} before, {load1[0]:.1f} after, "
          f"{os.cpu_count()} CPUs")
    print(f"| round | {sides[0][0]} M tokens/s | {sides[1][0]} M tokens/s | "
          f"{sides[0][0]} CPU ms / M tokens | {sides[1][0]} CPU ms / M tokens |")
    print("|---:|---:|---:|---:|---:|")
    b, n = results[sides[0][0]], results[sides[1][0]]
    for r in range(a.rounds):
        print(f"| {r + 1} | {b[r][0] / 1e6:.1f} | {n[r][0] / 1e6:.1f} | {b[r][1]:.3f} | "
              f"{n[r][1]:.3f} |")
    for name, _ in sides:
        v = results[name]
        print(f"{name}: {span([x[0] / 1e6 for x in v], lambda x: f'{x:.1f}')} M tokens/s, "
              f"{span([x[1] for x in v], lambda x: f'{x:.3f}')} CPU ms per M tokens")


if __name__ == "__main__":
    main()
