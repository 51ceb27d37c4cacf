#!/usr/bin/env python3
"""Record readers side by side in one run: stoker's WebDataset, TFRecord, MDS, LitData, Parquet and
Hugging Face Arrow readers
(`stoker records`, one thread, reading every field's bytes) against each format's reference
Python reader on the same files (one thread, touching every field), plus `stoker pack` from each
format against `stoker pack` from the same texts as JSONL.

  reference readers: webdataset 1.0.2 WebDataset(...) iteration; tfrecord 1.14.6
  tfrecord_iterator + example_pb2 parsing; mosaicml-streaming 0.13.0 StreamingDataset[i];
  litdata 0.2.76 StreamingDataset[i]; pyarrow 26.0.1 ParquetFile.iter_batches + to_pylist;
  datasets 5.2.0 load_from_disk iteration. (stoker's Parquet/Arrow readers are Arrow C++ itself,
  from the same pyarrow wheel, turning every row into a record.)

Prints MB/s (of shard bytes on disk) and samples/s per thread, and the ratios, then the load
average and the whole run's time (well under 2 minutes with the defaults on an idle machine).

  STOKER_CLI=build/stoker .venv/bin/python bench/records_vs_reference.py [--samples 20000]
      [--text-bytes 2000] [--repeat 2]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")  # datasets' save bars
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))
from records_testlib import import_streaming  # noqa: E402

STOKER = os.environ.get("STOKER_CLI", str(Path(__file__).resolve().parents[1] / "build" / "stoker"))


def texts(n, size):
    rng = np.random.default_rng(0)
    words = ["data", "loader", "shard", "token", "record", "ключ", "月", "stream", "pack"]
    out = []
    for i in range(n):
        k = max(1, int(rng.lognormal(np.log(size / 6), 0.5)))
        out.append(" ".join(rng.choice(words, k)) + f" {i}")
    return out


def disk_bytes(paths):
    return sum(Path(p).stat().st_size for p in paths)


def best_of(repeat, fn):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        count = fn()
        s = time.perf_counter() - t
        best = s if best is None else min(best, s)
    return best, count


def ours(inputs):
    def run():
        p = subprocess.run([STOKER, "records", *inputs], capture_output=True, text=True, check=True)
        return json.loads(p.stdout)["records"]
    return run


def write_all(root, docs):
    import tfrecord
    import webdataset as wds
    streaming = import_streaming()
    wds_dir = root / "wds"
    wds_dir.mkdir()
    with wds.ShardWriter(str(wds_dir / "s-%06d.tar"), maxcount=len(docs) // 8 + 1, verbose=0) as w:
        for i, t in enumerate(docs):
            w.write({"__key__": f"k{i:08d}", "txt": t, "cls": i})
    tf_dir = root / "tf"
    tf_dir.mkdir()
    per = len(docs) // 8 + 1
    for s in range(8):
        w = tfrecord.TFRecordWriter(str(tf_dir / f"t-{s:05d}-of-00008"))
        for i, t in enumerate(docs[s * per:(s + 1) * per]):
            w.write({"text": (t.encode(), "byte"), "id": ([s * per + i], "int")})
        w.close()
    with streaming.MDSWriter(out=str(root / "mds"), columns={"text": "str", "id": "int"},
                             compression="zstd", size_limit=1 << 24) as w:
        for i, t in enumerate(docs):
            w.write({"text": t, "id": i})
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq
    from litdata.streaming.writer import BinaryWriter
    pq.write_table(pa.table({"text": docs, "id": list(range(len(docs)))}), root / "t.parquet",
                   row_group_size=len(docs) // 8 + 1)  # pyarrow's default snappy
    datasets.Dataset.from_dict({"text": docs, "id": list(range(len(docs)))}).save_to_disk(
        str(root / "hf"), max_shard_size="16MB")
    w = BinaryWriter(str(root / "ld"), chunk_bytes="16MB", compression="zstd",
                     compression_level="chunk")
    for i, t in enumerate(docs):
        w[i] = {"text": t, "id": np.int64(i).reshape(1)}  # a NumPy leaf keeps classic chunks
    w.done()
    w.merge()
    (root / "docs.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in docs),
                                     encoding="utf-8")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--text-bytes", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    started = time.perf_counter()
    import tfrecord
    import webdataset as wds
    from tfrecord import example_pb2
    streaming = import_streaming()

    root = Path(tempfile.mkdtemp(prefix="stoker-records-bench-"))
    try:
        docs = texts(args.samples, args.text_bytes)
        write_all(root, docs)
        wds_shards = sorted(str(p) for p in (root / "wds").glob("*.tar"))
        tf_files = sorted(str(p) for p in (root / "tf").iterdir())
        mds_files = [str(p) for p in (root / "mds").glob("*.zstd")]

        def ref_wds():
            n = 0
            for s in wds.WebDataset(wds_shards, shardshuffle=False, empty_check=False):
                n += len(s["txt"]) > -1
            return n

        def ref_tf():
            n = 0
            for f in tf_files:
                for raw in tfrecord.tfrecord_iterator(f):
                    ex = example_pb2.Example.FromString(bytes(raw))
                    n += len(ex.features.feature["text"].bytes_list.value[0]) > -1
            return n

        def ref_mds():
            copy = root / "mds-ref"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(root / "mds", copy)
            ds = streaming.StreamingDataset(local=str(copy), shuffle=False, batch_size=1)
            n = 0
            for i in range(len(ds)):
                n += len(ds[i]["text"]) > -1
            return n

        def ref_parquet():
            import pyarrow.parquet as pq
            n = 0
            for batch in pq.ParquetFile(root / "t.parquet").iter_batches(batch_size=1024):
                for row in batch.to_pylist():
                    n += len(row["text"]) > -1
            return n

        def ref_hf():
            import datasets
            n = 0
            for row in datasets.load_from_disk(str(root / "hf")):
                n += len(row["text"]) > -1
            return n

        def ref_litdata():
            from litdata import StreamingDataset
            copy = root / "ld-ref"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(root / "ld", copy)
            ds = StreamingDataset(str(copy))
            n = 0
            for i in range(len(ds)):
                n += len(ds[i]["text"]) > -1
            return n

        hf_files = sorted(str(p) for p in (root / "hf").glob("*.arrow"))
        ld_files = sorted(str(p) for p in (root / "ld").glob("*.bin"))
        rows = []
        for name, files, ref in [("webdataset", wds_shards, ref_wds), ("tfrecord", tf_files, ref_tf),
                                 ("mds (zstd)", mds_files, ref_mds),
                                 ("litdata (zstd)", ld_files, ref_litdata),
                                 ("parquet (snappy)", [str(root / "t.parquet")], ref_parquet),
                                 ("hf save_to_disk", hf_files, ref_hf)]:
            inputs = {"mds (zstd)": [str(root / "mds")], "litdata (zstd)": [str(root / "ld")],
                      "hf save_to_disk": [str(root / "hf")]}.get(name, files)
            mb = disk_bytes(files) / 1e6
            s_ours, n_ours = best_of(args.repeat, ours(inputs))
            s_ref, n_ref = best_of(args.repeat, ref)
            assert n_ours == n_ref == len(docs), (name, n_ours, n_ref)
            rows.append((name, mb, n_ours, s_ours, s_ref))
        print(f"{len(docs)} samples, texts ~{args.text_bytes} bytes; best of {args.repeat}; one thread each")
        print("| format | MB on disk | stoker MB/s | stoker samples/s | reference MB/s | reference samples/s | stoker / reference |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, mb, n, so, sr in rows:
            print(f"| {name} | {mb:.1f} | {mb / so:.0f} | {n / so:,.0f} | {mb / sr:.1f} | {n / sr:,.0f} | {sr / so:.1f}x |")

        # pack (bytes tokenizer, one thread) from each format vs from JSONL.
        prow = []
        for name, inputs in [("jsonl", [str(root / "docs.jsonl")]), ("webdataset", wds_shards),
                             ("tfrecord", tf_files), ("mds (zstd)", [str(root / "mds")]),
                             ("litdata (zstd)", [str(root / "ld")]),
                             ("parquet (snappy)", [str(root / "t.parquet")]),
                             ("hf save_to_disk", [str(root / "hf")])]:
            field = ["--text-field", "txt"] if name == "webdataset" else []

            def run_pack():
                out = root / "packed"
                subprocess.run([STOKER, "pack", "--progress", "off", "--threads", "1", *inputs, *field,
                                "-o", str(out), "--overwrite"], check=True, capture_output=True)
                return len(docs)
            s, _ = best_of(args.repeat, run_pack)
            prow.append((name, s))
        base = prow[0][1]
        print("\n| pack input (bytes tokenizer, --threads 1) | seconds | documents/s | vs JSONL |")
        print("|---|---:|---:|---:|")
        for name, s in prow:
            print(f"| {name} | {s:.2f} | {len(docs) / s:,.0f} | {base / s:.2f}x |")
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"\nload average {load}; {os.cpu_count()} cores; whole run "
              f"{time.perf_counter() - started:.0f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
