"""A task-split pack as a cluster runs it (docs/pack.md, "Many machines"): the Slurm recipe as a
loop over array indices with the CLI, then `stoker merge OUTPUT`. Deterministic byte-balanced
tasks from a recorded plan, receipts written last, idempotent reruns, a task killed before its
receipt, merge refusing a missing or mismatched task, 2 vs 8 tasks, JSONL and WebDataset inputs,
an s3:// output. The Ray runner on top of this is tested in test_ray_pack.py."""

import collections
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from test_pack import read_dataset, run

BYTES_EOS = 256


def pack(*args, env=None):
    p = run("pack", "--progress", "off", *args, env=env)
    assert p.returncode == 0, p.stderr
    return p


def slurm_array(inputs, out, count, *extra, indices=None):
    """The Slurm recipe: `stoker pack ...` once per array index (numbered from 1, as
    `--array=1-N` does), each with the SLURM_* variables, then `stoker merge OUTPUT`."""
    outs = []
    for task in indices if indices is not None else range(count):
        env = {"SLURM_ARRAY_TASK_ID": str(task + 1), "SLURM_ARRAY_TASK_MIN": "1",
               "SLURM_ARRAY_TASK_COUNT": str(count)}
        outs.append(pack(*inputs, "-o", out, *extra, env=env).stdout)
    return outs


def merge(out):
    p = run("merge", out)
    assert p.returncode == 0, p.stderr
    return json.loads((Path(out) / "manifest.json").read_text())


def documents(directory):
    """(id, text) of every document, in dataset order, read from the shards (bytes tokenizer):
    test_pack.read_dataset's token lists, decoded."""
    docs = []
    for tokens in read_dataset(directory)[1]:
        assert tokens[-1] == BYTES_EOS
        text = bytes(tokens[:-1]).decode("utf-8")
        docs.append((text.split(" ", 1)[0], text))
    return docs


def corpus(directory, sizes=(30, 5, 5, 12, 1, 40, 8, 3, 20, 6)):
    """JSONL files of very different sizes; every document starts with its id."""
    directory.mkdir(parents=True, exist_ok=True)
    for f, n in enumerate(sizes):
        with open(directory / f"{f:02d}.jsonl", "w", encoding="utf-8") as out:
            for d in range(n):
                text = f"f{f}-d{d} " + "слово word " * ((f * 7 + d) % 23 + 1)
                out.write(json.dumps({"text": text}) + "\n")
    return directory


def tree(directory):
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(Path(directory).rglob("*")) if p.is_file()}


def task_lines(listing):
    """{task: (files, bytes)} from `stoker pack --list`."""
    out = {}
    for line in listing.splitlines():
        if line.startswith("task "):
            head, rest = line.split(":", 1)
            files, size = rest.split(",")[:2]
            out[int(head.split()[1])] = (int(files.split()[0]), int(size.split()[0]))
    return out


def test_list_balances_by_bytes_and_the_recorded_plan_ignores_new_files(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    # One large file then nine small ones: balanced by bytes, task 0 gets the large file alone
    # (by count it would get five files).
    (src / "a-big.jsonl").write_text(json.dumps({"text": "big " + "x" * 90_000}) + "\n")
    for i in range(9):
        (src / f"b{i}.jsonl").write_text(json.dumps({"text": f"small{i} " + "y" * 9_000}) + "\n")
    listing = pack(src, "-o", tmp_path / "job", "--task-count", "2", "--list").stdout
    tasks = task_lines(listing)
    total = sum(p.stat().st_size for p in src.iterdir())
    assert tasks[0] == (1, (src / "a-big.jsonl").stat().st_size), listing
    assert tasks[1][0] == 9 and tasks[0][1] + tasks[1][1] == total
    assert f"{src / 'b3.jsonl'} " in listing
    plan = json.loads((tmp_path / "job" / "inputs.json").read_text())
    assert plan["task_count"] == 2 and len(plan["files"]) == 10
    # A file that appears after the plan is not packed, and --list prints the same split.
    (src / "c-late.jsonl").write_text(json.dumps({"text": "late"}) + "\n")
    assert pack(src, "-o", tmp_path / "job", "--task-count", "2", "--list").stdout == listing
    for t in (0, 1):
        pack(src, "-o", tmp_path / "job", "--task-index", t, "--task-count", 2)
    merge(tmp_path / "job")
    ids = [i for i, _ in documents(tmp_path / "job")]
    assert ids == ["big"] + [f"small{i}" for i in range(9)]
    # Another task count, or other inputs, for the same output is refused, naming the plan.
    p = run("pack", src, "-o", tmp_path / "job", "--task-index", "0", "--task-count", "3")
    assert p.returncode == 2 and "inputs.json" in p.stderr and "task count 2" in p.stderr


def test_slurm_recipe_equals_a_single_pack_and_reruns_do_nothing(tmp_path):
    src = corpus(tmp_path / "in")
    pack(src, "-o", tmp_path / "single", "--shard-size", "2KiB")
    job = tmp_path / "job"
    slurm_array([src], job, 4, "--shard-size", "2KiB")
    manifest = merge(job)
    assert documents(job) == documents(tmp_path / "single")
    assert manifest["counters"]["merged_parts"] == 4
    # The manifest names the tasks' shards where they are: nothing copied, nothing relative.
    assert all(s["prefix"].startswith("part-") and "/" not in s["prefix"]
               for s in manifest["shards"])
    names = {p.name for p in job.iterdir()}
    assert {"inputs.json", "manifest.json", "tasks"} <= names
    assert sorted(p.name for p in (job / "tasks").iterdir()) == [f"{t:05d}.json" for t in range(4)]
    receipt = json.loads((job / "tasks" / "00002.json").read_text())
    assert receipt["task_index"] == 2 and receipt["options"]["shard_size_bytes"] == 2048
    assert all(len(i["xxh3"]) == 16 for i in receipt["inputs"]) and receipt["inputs"]
    before = tree(job)
    stats = {p: p.stat().st_mtime_ns for p in job.glob("part-*")}
    # A second run of every task does nothing.
    for out in slurm_array([src], job, 4, "--shard-size", "2KiB"):
        assert "nothing to do" in out, out
    assert {p: p.stat().st_mtime_ns for p in job.glob("part-*")} == stats
    # Deleting one task's receipt reruns that task only.
    (job / "tasks" / "00001.json").unlink()
    outs = slurm_array([src], job, 4, "--shard-size", "2KiB")
    assert ["nothing to do" in out for out in outs] == [True, False, True, True], outs
    assert not (job / "manifest.json").exists()  # the rerun task unpublished the merged dataset
    merge(job)
    assert tree(job) == before


def test_a_killed_task_is_not_taken_for_finished_and_its_rerun_is_byte_identical(tmp_path):
    src = corpus(tmp_path / "in")
    slurm_array([src], tmp_path / "clean", 3, "--shard-size", "2KiB")
    merge(tmp_path / "clean")
    job = tmp_path / "job"
    marker = tmp_path / "killed"
    env = {"STOKER_TEST_KILL_TASK": f"1:{marker}"}
    slurm_array([src], job, 3, "--shard-size", "2KiB", indices=[0, 2])
    p = run("pack", "--progress", "off", src, "-o", job, "--shard-size", "2KiB",
            "--task-index", "1", "--task-count", "3", env=env)
    assert p.returncode == -9 and marker.exists()  # killed after its shards, before its receipt
    assert list(job.glob("part-00001-*.bin")) and not (job / "tasks" / "00001.json").exists()
    m = run("merge", job)
    assert m.returncode == 2 and "task 1 of 3 has no receipt" in m.stderr, m.stderr
    assert not (job / "manifest.json").exists()
    # The rerun (the marker now exists: no second kill) finishes it; the dataset is the same bytes.
    run_out = pack(src, "-o", job, "--shard-size", "2KiB", "--task-index", "1", "--task-count", "3",
                   env=env).stdout
    assert "nothing to do" not in run_out
    merge(job)
    assert tree(job) == tree(tmp_path / "clean")


def test_merge_names_a_mismatched_or_missing_task(tmp_path):
    src = corpus(tmp_path / "in")
    job = tmp_path / "job"
    slurm_array([src], job, 4, indices=[0, 1, 3])
    m = run("merge", job)
    assert m.returncode == 2 and "task 2 of 4 has no receipt" in m.stderr
    assert "--task-index 2 --task-count 4" in m.stderr
    # Task 2 with other options: merge names it.
    pack(src, "-o", job, "--task-index", "2", "--task-count", "4", "--shard-size", "1KiB")
    m = run("merge", job)
    assert m.returncode == 2 and "task 2 of 4 was packed with other options" in m.stderr, m.stderr
    # The option that differs is named, with both values, not two blobs of options.
    assert "shard_size_bytes (1024 in task 2 of 4, " in m.stderr, m.stderr
    assert m.stderr.count("shard_size_bytes") == 1 and "tokenizer" not in m.stderr, m.stderr
    # Rerunning it with the job's options is refused without --overwrite (its receipt differs).
    p = run("pack", src, "-o", job, "--task-index", "2", "--task-count", "4")
    assert p.returncode == 2 and "--overwrite redoes it" in p.stderr
    assert "other options: shard_size_bytes (1024 in its receipt, " in p.stderr, p.stderr
    pack(src, "-o", job, "--task-index", "2", "--task-count", "4", "--overwrite")
    merge(job)
    # A receipt whose inputs are not its slice of the plan, and a shard gone, are named.
    receipt = job / "tasks" / "00003.json"
    text = receipt.read_text()
    r = json.loads(text)
    r["inputs"] = r["inputs"][1:]
    receipt.write_text(json.dumps(r))
    m = run("merge", job)
    assert m.returncode == 2 and "not task 3 of 4's slice" in m.stderr, m.stderr
    receipt.write_text(text)
    shard = sorted(job.glob("part-00000-*.bin"))[0]
    shard.unlink()
    m = run("merge", job)
    assert m.returncode == 2 and f"task 0 of 4's shard {shard} is missing" in m.stderr, m.stderr
    # ... and the rerun of that task (its shards are not all there) redoes it.
    out = pack(src, "-o", job, "--task-index", "0", "--task-count", "4").stdout
    assert "nothing to do" not in out
    merge(job)


def test_merge_gives_a_rerun_for_every_missing_task(tmp_path):
    src = corpus(tmp_path / "in")
    job = tmp_path / "job"
    slurm_array([src], job, 4, indices=[0, 2])
    m = run("merge", job)
    assert m.returncode == 2 and "tasks 1, 3 of 4 have no receipt" in m.stderr, m.stderr
    assert "--task-index 1 --task-count 4, --task-index 3 --task-count 4" in m.stderr, m.stderr
    assert "sbatch --array=2,4" in m.stderr, m.stderr


def test_verify_and_inspect_of_an_unmerged_output_point_to_merge(tmp_path):
    src = corpus(tmp_path / "in")
    job = tmp_path / "job"
    slurm_array([src], job, 2)
    for command in ("verify", "inspect"):
        p = run(command, job)
        assert p.returncode != 0, p.stdout
        assert "not merged yet: run `stoker merge " + str(job) + "`" in p.stderr, p.stderr


def test_list_without_a_task_count_is_refused(tmp_path):
    src = corpus(tmp_path / "in")
    p = run("pack", src, "-o", tmp_path / "job", "--list")
    assert p.returncode == 2 and "give --task-count N" in p.stderr, p.stderr
    assert not (tmp_path / "job").exists()  # no one-task plan written


def test_pack_help_says_the_tokenizer_may_be_a_model_folder():
    assert "a model folder" in run("pack", "--help").stdout


def test_a_task_says_it_is_done_with_its_own_summary(tmp_path):
    src = corpus(tmp_path / "in")
    out = pack(src, "-o", tmp_path / "job", "--task-index", "0", "--task-count", "2",
               "--num-workers", "1").stdout
    assert "pack: task 0 of 2 done: " in out, out
    assert "1 thread)" in out and "1 threads" not in out, out


def test_an_input_changed_since_the_plan_is_refused(tmp_path):
    src = corpus(tmp_path / "in")
    pack(src, "-o", tmp_path / "job", "--task-count", "2", "--list")
    with open(src / "00.jsonl", "a") as f:
        f.write(json.dumps({"text": "appended"}) + "\n")
    p = run("pack", src, "-o", tmp_path / "job", "--task-index", "0", "--task-count", "2")
    assert p.returncode == 2 and "00.jsonl: planned input changed size" in p.stderr, p.stderr


def test_a_task_reads_its_inputs_from_the_plan_not_from_a_new_listing(tmp_path):
    # The plan records each file's kind and size: a task opens its own slice from it, and
    # neither lists the inputs nor looks at the other tasks' files.
    src = corpus(tmp_path / "in")
    job = tmp_path / "job"
    listing = pack(src, "-o", job, "--task-count", "2", "--list").stdout
    plan = json.loads((job / "inputs.json").read_text())
    assert {f["kind"] for f in plan["files"]} == {"jsonl"}
    last = Path(plan["files"][-1]["path"])  # in task 1's slice
    assert f"{last} " in listing.split("task 1:")[1]
    last.unlink()
    out = pack(src, "-o", job, "--task-index", "0", "--task-count", "2").stdout
    assert "nothing to do" not in out
    p = run("pack", src, "-o", job, "--task-index", "1", "--task-count", "2")
    assert p.returncode == 2 and f"{last}: planned input" in p.stderr and "is gone" in p.stderr


def test_2_and_8_tasks_give_the_same_documents(tmp_path):
    src = corpus(tmp_path / "in")
    for n in (2, 8):
        slurm_array([src], tmp_path / f"t{n}", n, "--shard-size", "1KiB")
        merge(tmp_path / f"t{n}")
    two, eight = documents(tmp_path / "t2"), documents(tmp_path / "t8")
    assert collections.Counter(two) == collections.Counter(eight)
    assert len({i for i, _ in two}) == len(two) == sum((30, 5, 5, 12, 1, 40, 8, 3, 20, 6))
    assert two == eight  # contiguous slices: even the order is the single-task order


def write_tar(path, samples):
    with tarfile.open(path, "w") as tar:
        for key, text in samples:
            data = text.encode("utf-8")
            info = tarfile.TarInfo(f"{key}.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_webdataset_inputs_split_into_tasks(tmp_path):
    src = tmp_path / "wds"
    src.mkdir()
    for s in range(5):
        write_tar(src / f"shard-{s:06d}.tar",
                  [(f"s{s}k{k}", f"w{s}-{k} " + "текст " * (s + k)) for k in range(4 + 3 * s)])
    tars = sorted(str(p) for p in src.iterdir())
    pack(*tars, "-o", tmp_path / "single", "--text-field", "txt")
    slurm_array(tars, tmp_path / "job", 3, "--text-field", "txt")
    merge(tmp_path / "job")
    assert documents(tmp_path / "job") == documents(tmp_path / "single")


def test_tfrecord_output_split_into_tasks_holds_the_single_pack_records(tmp_path):
    src = corpus(tmp_path / "in")
    pack(src, "-o", tmp_path / "single", "--format", "tfrecord", "--shard-size", "4KiB")
    job = tmp_path / "job"
    slurm_array([src], job, 3, "--format", "tfrecord", "--shard-size", "4KiB")
    assert not (job / "tfrecord" / "records.json").exists()  # the merge writes it
    merge(job)
    assert documents(job) == documents(tmp_path / "single")
    one = json.loads((tmp_path / "single" / "tfrecord" / "records.json").read_text())
    many = json.loads((job / "tfrecord" / "records.json").read_text())
    assert many["records"] == one["records"] > 0 and many["format"] == "tfrecord"
    assert {f["name"][:10] for f in many["files"]} == {"part-00000", "part-00001", "part-00002"}
    for f in many["files"]:
        assert (job / "tfrecord" / f["name"]).stat().st_size == f["bytes"]
    # TFRecord files are framed records one after another: the concatenations are equal.
    cat = lambda d, files: b"".join((d / "tfrecord" / f["name"]).read_bytes() for f in files)
    assert cat(job, many["files"]) == cat(tmp_path / "single", one["files"])
    # A rerun skips; a deleted TFRecord file makes merge name the task, and its rerun redoes it.
    victim = many["files"][-1]["name"]
    (job / "tfrecord" / victim).unlink()
    m = run("merge", job)
    assert m.returncode == 2 and "TFRecord file" in m.stderr and victim in m.stderr, m.stderr
    outs = slurm_array([src], job, 3, "--format", "tfrecord", "--shard-size", "4KiB")
    assert ["nothing to do" in o for o in outs] == [True, True, False], outs
    merge(job)
    assert cat(job, many["files"]) == cat(tmp_path / "single", one["files"])


def wds_members(directory):
    """[(tar, member name, bytes)] of a webdataset output, in its records.json order."""
    directory = Path(directory)
    listed = json.loads((directory / "records.json").read_text())
    assert listed["format"] == "webdataset"
    members = []
    for f in listed["files"]:
        assert (directory / f["name"]).stat().st_size == f["bytes"]
        with tarfile.open(directory / f["name"]) as tar:
            members += [(f["name"], m.name, tar.extractfile(m).read()) for m in tar.getmembers()]
    return listed, members


def test_webdataset_output_split_into_tasks(tmp_path):
    # Samples of two or three members of very different sizes: byte-balanced boundaries fall
    # inside samples, and must be moved so that no sample is cut between two tasks.
    src = tmp_path / "samples"
    src.mkdir()
    for k in range(23):
        (src / f"{k:03d}.txt").write_text(f"sample {k} " + "слово " * (k * 37 % 101))
        (src / f"{k:03d}.json").write_text(json.dumps({"k": k, "pad": "x" * (k * 53 % 211)}))
        if k % 3 == 0:
            (src / f"{k:03d}.cls").write_text(str(k % 5))
    (src / "README").write_text("no extension: skipped")
    p = run("pack", "--progress", "off", src, "-o", tmp_path / "single", "--format", "webdataset",
            "--shard-size", "2KiB")
    assert p.returncode == 0, p.stderr
    one, single = wds_members(tmp_path / "single")
    for n in (2, 8):
        job = tmp_path / f"t{n}"
        slurm_array([src], job, n, "--format", "webdataset", "--shard-size", "2KiB")
        assert not (job / "records.json").exists()  # the merge writes it
        m = run("merge", job)
        assert m.returncode == 0 and "23 samples" in m.stdout, m.stderr + m.stdout
        listed, members = wds_members(job)
        # The same members with the same bytes in the same order; only the tar names differ.
        assert [x[1:] for x in members] == [x[1:] for x in single]
        assert listed["records"] == one["records"] == 23
        assert listed["files_skipped"] == one["files_skipped"] == 1
        assert {f["name"][:10] for f in listed["files"]} <= {f"part-{t:05d}" for t in range(n)}
        # No sample is in two tar shards.
        tars_of = collections.defaultdict(set)
        for tar, name, _ in members:
            tars_of[name.split(".")[0]].add(tar)
        assert all(len(t) == 1 for t in tars_of.values()), tars_of
        receipt = json.loads((job / "tasks" / "00001.json").read_text())
        assert receipt["options"] == {"format": "webdataset", "shard_size_bytes": 2048}
    # A rerun does nothing; merge refuses a missing task and names it; its rerun redoes it.
    job = tmp_path / "t8"
    outs = slurm_array([src], job, 8, "--format", "webdataset", "--shard-size", "2KiB")
    assert all("nothing to do" in o for o in outs), outs
    (job / "tasks" / "00005.json").unlink()
    m = run("merge", job)
    assert m.returncode == 2 and "task 5 of 8 has no receipt" in m.stderr, m.stderr
    outs = slurm_array([src], job, 8, "--format", "webdataset", "--shard-size", "2KiB")
    assert ["nothing to do" in o for o in outs] == [t != 5 for t in range(8)], outs
    assert not (job / "records.json").exists()  # the rerun task unpublished the merged listing
    assert run("merge", job).returncode == 0
    assert [x[1:] for x in wds_members(job)[1]] == [x[1:] for x in single]


def test_import_stoker_does_not_import_ray():
    code = "import sys, stoker; assert 'ray' not in sys.modules, 'ray imported'; print('ok')"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
