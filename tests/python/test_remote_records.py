"""Record formats read where they are, on an S3 server (moto, IAM auth on) and over HTTP (nginx):
WebDataset tars (glob patterns listed with ListObjectsV2, brace patterns, .tar.gz, .tar.zst, a
sample bigger than one 8 MiB part), TFRecord, MosaicML MDS and LitData (shards from index.json),
Parquet (row groups from the footer, read with ranged GETs) and Hugging Face save_to_disk
directories. Each dataset is written by its format's reference writer; `stoker records --dump`
of the remote copy equals that of the local one (which test_records_*.py checks against the
reference readers), and `pack` and `Stream` read them too. A proxy counts the requests: a
constant number per dataset for listing, about one GET per 8 MiB of shard, never a HEAD per
sample or per listed shard."""

import collections
import gzip
import json
import os
import shutil

import numpy as np
import pytest

pytest.importorskip("boto3")
pytest.importorskip("moto")
wds = pytest.importorskip("webdataset")

import stoker  # noqa: E402
from records_testlib import dump, packed_documents, run  # noqa: E402
from remote_testlib import (BUCKET, nginx_session, proxy_in_env, s3_session,  # noqa: E402,F401
                            upload_dir)

PART = 8 << 20


@pytest.fixture
def s3(s3_session, monkeypatch):
    """The session's server, its credentials in this process's environment (the CLI and the
    Python module inherit them), requests through a counting proxy."""
    proxy = proxy_in_env(s3_session, monkeypatch)
    yield {**s3_session, "proxy": proxy}
    proxy.close()


def upload(s3, local_dir, prefix):
    upload_dir(s3["client"], local_dir, prefix)
    s3["proxy"].reset_counts()
    return f"s3://{BUCKET}/{prefix}"


def counts(s3):
    return dict(s3["proxy"].counts)


def wds_shards(d, n=10, maxcount=4, suffix=".tar"):
    from test_records_webdataset import samples, write_samples
    d.mkdir(parents=True, exist_ok=True)
    write_samples(str(d / f"train-%06d{suffix}"), samples(n), maxcount=maxcount)
    return sorted(p.name for p in d.iterdir())


def test_webdataset_glob_brace_and_prefix_from_s3_equal_local(tmp_path, s3):
    names = wds_shards(tmp_path / "wds")
    assert len(names) == 3
    expected = dump(str(tmp_path / "wds" / "train-{000000..000002}.tar"))
    assert len(expected) == 11
    uri = upload(s3, tmp_path / "wds", "wds/a")
    # A glob: one LIST, then one GET per shard (sizes from the listing: no HEAD).
    assert dump(f"{uri}/train-*.tar") == expected
    assert counts(s3) == {"LIST": 1, "GET": 3}, counts(s3)
    s3["proxy"].reset_counts()
    # A brace pattern names the shards: one HEAD each for the size, one GET each.
    assert dump(f"{uri}/train-{{000000..000002}}.tar") == expected
    assert counts(s3) == {"HEAD": 3, "GET": 3}, counts(s3)
    s3["proxy"].reset_counts()
    # A prefix with the format given is listed.
    assert dump(uri, input_format="webdataset") == expected
    assert counts(s3) == {"LIST": 1, "GET": 3}, counts(s3)


def test_compressed_tars_and_a_sample_bigger_than_a_part(tmp_path, s3):
    zstd = pytest.importorskip("zstd")
    names = wds_shards(tmp_path / "gz", suffix=".tar.gz")
    d = tmp_path / "big"
    d.mkdir()
    big = bytes(range(256)) * ((PART * 5 // 2) // 256)  # 20 MiB: three parts
    from test_records_webdataset import write_samples
    write_samples(str(d / "big-%06d.tar"), [{"__key__": "big", "bin": big, "txt": "x"},
                                             {"__key__": "after", "txt": "y"}])
    (d / "big.tar.zst").write_bytes(zstd.compress((d / "big-000000.tar").read_bytes(), 1))
    expected_gz = dump(*[str(tmp_path / "gz" / n) for n in names])
    expected_big = dump(str(d / "big-000000.tar"))
    assert expected_big[0][1]["bin"] == big
    gz = upload(s3, tmp_path / "gz", "wds/gz")
    assert dump(f"{gz}/*.tar.gz") == expected_gz
    big_uri = upload(s3, d, "wds/big")
    assert dump(f"{big_uri}/big-000000.tar") == expected_big
    size = (d / "big-000000.tar").stat().st_size
    # One HEAD (the size), then whole 8 MiB parts, each once.
    assert counts(s3) == {"HEAD": 1, "GET": -(-size // PART)}, counts(s3)
    assert dump(f"{big_uri}/big.tar.zst") == expected_big


def test_tfrecord_from_s3_equals_local(tmp_path, s3):
    from test_records_tfrecord import write_reference
    d = tmp_path / "tf"
    d.mkdir()
    write_reference(d / "a.tfrecord", n=30)
    (d / "b.tfrecord.gz").write_bytes(gzip.compress((d / "a.tfrecord").read_bytes()))
    expected = dump(str(d / "a.tfrecord"), str(d / "b.tfrecord.gz"))
    assert len(expected) == 60
    uri = upload(s3, d, "tf")
    assert dump(f"{uri}/*.tfrecord*") == expected
    assert counts(s3) == {"LIST": 1, "GET": 2}, counts(s3)


def test_mds_from_s3_reads_its_index_once_and_no_head(tmp_path, s3):
    from test_records_mds import write
    write(tmp_path / "mds", n=60, compression="zstd", hashes=("xxh64",))
    shards = json.loads((tmp_path / "mds" / "index.json").read_text())["shards"]
    assert len(shards) > 2
    expected = dump(str(tmp_path / "mds"))
    uri = upload(s3, tmp_path / "mds", "mds/ds")
    assert dump(uri) == expected
    # index.json once (a HEAD for its size, a GET), then one GET per shard: sizes from the index.
    assert counts(s3) == {"HEAD": 1, "GET": 1 + len(shards)}, counts(s3)
    s3["proxy"].reset_counts()
    assert dump(f"{uri}/index.json") == expected
    assert counts(s3) == {"HEAD": 1, "GET": 1 + len(shards)}, counts(s3)


def test_litdata_from_s3_equals_local(tmp_path, s3):
    pytest.importorskip("litdata")
    from test_records_litdata import tree, write
    write(tmp_path / "lit", [tree(i) for i in range(40)], chunk_bytes=400)
    chunks = json.loads((tmp_path / "lit" / "index.json").read_text())["chunks"]
    assert len(chunks) > 2
    expected = dump(str(tmp_path / "lit"))
    uri = upload(s3, tmp_path / "lit", "lit/ds")
    assert dump(uri) == expected
    # The index travels with the chunks: it is not read again per chunk.
    assert counts(s3) == {"HEAD": 1, "GET": 1 + len(chunks)}, counts(s3)


def test_parquet_row_groups_from_s3_with_ranged_reads(tmp_path, s3):
    pq = pytest.importorskip("pyarrow.parquet")
    from test_records_arrow import table
    d = tmp_path / "pq"
    d.mkdir()
    pq.write_table(table(200), d / "a.parquet", row_group_size=50)
    pq.write_table(table(30), d / "b.parquet", compression="zstd")
    expected = dump(str(d / "a.parquet"), str(d / "b.parquet"))
    uri = upload(s3, d, "pq")
    assert dump(f"{uri}/*.parquet") == expected
    c = counts(s3)
    assert c.get("LIST") == 1 and "HEAD" not in c, c
    # Footers when listing, then the footer and the row group of each of the 5 shards: a few
    # small ranged GETs each, never a GET of a whole file per row.
    assert c["GET"] <= 2 * 2 + 5 * 4, c


def test_hf_save_to_disk_from_s3_equals_local(tmp_path, s3):
    datasets = pytest.importorskip("datasets")
    n = 300
    ds = datasets.Dataset.from_dict({
        "text": [f"hf {i} é 🙂" * (i % 3) for i in range(n)],
        "input_ids": [list(range(i % 9)) for i in range(n)],
    })
    ds.save_to_disk(str(tmp_path / "hf"), max_shard_size="4KB")
    files = json.loads((tmp_path / "hf" / "state.json").read_text())["_data_files"]
    assert len(files) > 1
    expected = dump(str(tmp_path / "hf"))
    uri = upload(s3, tmp_path / "hf", "hf/ds")
    assert dump(uri) == expected
    # HEADs: index.json (missing), state.json (there: a save_to_disk directory), state.json's
    # size for its GET; one LIST for the files' sizes; then one GET per file.
    assert counts(s3) == {"HEAD": 3, "GET": 1 + len(files), "LIST": 1}, counts(s3)


def test_pack_and_stream_from_s3_equal_local(tmp_path, s3):
    from test_stream_records import TEXTS, documents, loader, write_wds
    (tmp_path / "rec").mkdir()
    shards = write_wds(tmp_path / "rec", TEXTS)
    uri = upload(s3, tmp_path / "rec", "stream/rec")
    expected = packed_documents(tmp_path, "local", *shards, "--text-field", "txt")
    assert packed_documents(tmp_path, "remote", f"{uri}/shard-*.tar",
                            "--text-field", "txt") == expected
    local = documents(loader(shards, text_field="txt"))
    assert sum(local.values()) == len(TEXTS)
    s3["proxy"].reset_counts()
    assert documents(loader([f"{uri}/shard-*.tar"], text_field="txt")) == local
    c = counts(s3)
    assert "HEAD" not in c and c.get("GET", 0) <= 4 * len(shards), c


def test_http_brace_patterns_and_index_json(tmp_path, nginx_session):
    from test_records_mds import write
    names = wds_shards(tmp_path / "wds")
    write(tmp_path / "mds", n=30)
    www = nginx_session["www"] / "rec"
    shutil.copytree(tmp_path, www)
    base = f"{nginx_session['url']}/rec"
    assert (dump(f"{base}/wds/train-{{000000..000002}}.tar") ==
            dump(*[str(tmp_path / "wds" / n) for n in names]))
    assert dump(f"{base}/mds") == dump(str(tmp_path / "mds"))
    # A server without listing: a glob says what to pass instead.
    p = run("records", "--dump", f"{base}/wds/train-*.tar")
    assert p.returncode == 2 and "cannot be listed" in p.stderr, p.stderr


def test_missing_remote_inputs_are_one_clear_error(s3, tmp_path):
    p = run("records", "--dump", f"s3://{BUCKET}/nothing/here-*.tar")
    assert p.returncode == 2 and "matches no object" in p.stderr, p.stderr
    p = run("records", "--dump", f"s3://{BUCKET}/nothing/ds")
    assert p.returncode == 2 and "--input-format" in p.stderr, p.stderr
    assert os.environ["AWS_SECRET_ACCESS_KEY"] not in p.stderr
    p = run("pack", f"s3://{BUCKET}/corpus.jsonl", "-o", tmp_path / "never")
    assert p.returncode != 0 and "corpus.jsonl: no such object" in p.stderr, p.stderr
