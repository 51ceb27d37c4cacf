"""`stoker bench --report FILE.html`: a self-contained page, rendered in headless Chromium.

Chromium (Debian's `chromium`, installed by scripts/setup) loads the page with the network off,
dumps the DOM it built, and takes a screenshot; the test decodes the PNG and checks that each
plot's colour is painted where its plot lies, so "drawn" means pixels, not just markup.
"""

import os
import re
import shutil
import struct
import subprocess
import zlib

import numpy as np
import pytest

THROUGHPUT = (0x1F, 0x77, 0xB4)
STALL = (0xD6, 0x27, 0x28)
READ = (0x2C, 0xA0, 0x2C)
ASSEMBLE = (0xFF, 0x7F, 0x0E)
WAIT = (0x8C, 0x56, 0x4B)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("headless Chromium is needed (scripts/setup installs Debian's `chromium`)")


def run_chromium(*args):
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", "--disable-background-networking",
           "--proxy-server=127.0.0.1:9", "--hide-scrollbars", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def decode_png(data):
    """8-bit RGB/RGBA non-interlaced PNG -> numpy array [h, w, channels]."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1)
        line = line.astype(np.int32)
        if f == 0:
            cur = line
        elif f == 2:
            cur = (line + prev) & 0xFF
        else:  # filters 1 (sub), 3 (average), 4 (paeth) depend on the pixel to the left
            cur = np.zeros(stride, dtype=np.int32)
            for x in range(stride):
                a = cur[x - channels] if x >= channels else 0
                b = prev[x]
                c = prev[x - channels] if x >= channels else 0
                if f == 1:
                    pred = a
                elif f == 3:
                    pred = (a + b) // 2
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[x] = (line[x] + pred) & 0xFF
        out[y] = cur
        prev = cur
    return out.reshape(height, width, channels)[:, :, :3]


def count_color(img, rgb, tolerance=8):
    diff = np.abs(img.astype(np.int32) - np.array(rgb, dtype=np.int32)).max(axis=2)
    return int((diff <= tolerance).sum()), diff <= tolerance


@pytest.fixture(scope="module")
def report(tmp_path_factory, stoker_cli):
    d = tmp_path_factory.mktemp("report")
    data = d / "tokens.npy"
    np.save(data, np.random.default_rng(1).integers(0, 50000, (600, 1024), dtype=np.uint16))
    html = d / "bench.html"
    r = subprocess.run([stoker_cli, "bench", str(data), "--seq-len", "512", "--batch-size", "8",
                        "--workers", "2", "--warmup-batches", "2", "--seconds", "1.5",
                        "--consumer-step-ms", "1", "--report", str(html)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"report written to {html}" in r.stdout
    return html


def test_report_is_self_contained(report):
    text = report.read_text()
    assert "<script" not in text
    assert not re.search(r"""(src|href)\s*=""", text)
    assert "@import" not in text and "url(" not in text
    assert "Warm-up excluded" in text


def test_report_dom_after_rendering(report):
    r = run_chromium("--dump-dom", f"file://{report}")
    assert r.returncode == 0, r.stderr
    dom = r.stdout
    for plot in ("plot-throughput", "plot-stall", "plot-stages"):
        assert f'id="{plot}"' in dom, plot
    # One polyline per time plot, with one point per timeline sample (1.5 s at 0.25 s: >= 4).
    lines = re.findall(r'<polyline class="series"[^>]*points="([^"]*)"', dom)
    assert len(lines) == 2
    for pts in lines:
        assert len(pts.split()) >= 4
    # read, assemble, consumer wait; tokenize and the copy are n/a here (text, no bar)
    assert len(re.findall(r'<rect class="bar"', dom)) == 3
    # The summary table: values rounded with units for people, exact in data-value for scripts.
    cell = re.search(r'data-key="tokens_per_s" data-value="([^"]+)">([^<]+)<', dom)
    assert cell, "tokens/s row missing"
    exact, shown = float(cell.group(1)), cell.group(2)
    assert exact > 0
    assert "e+" not in shown and re.fullmatch(r"[0-9.]+( [kMGTP])?", shown), shown
    assert 'data-key="time_to_first_batch_s"' in dom and re.search(r'>[0-9.]+ s<', dom)


def test_report_plots_are_painted(report, tmp_path):
    png = tmp_path / "shot.png"
    r = run_chromium(f"--screenshot={png}", "--window-size=820,1400", f"file://{report}")
    assert png.exists(), r.stderr
    img = decode_png(png.read_bytes())
    height = img.shape[0]
    n_tp, mask_tp = count_color(img, THROUGHPUT)
    n_st, mask_st = count_color(img, STALL)
    assert n_tp > 200, "throughput line not drawn"
    assert n_st > 200, "stall line not drawn"
    # The throughput plot comes first, then the stall plot, then the stage bars.
    y_tp = np.nonzero(mask_tp.any(axis=1))[0]
    y_st = np.nonzero(mask_st.any(axis=1))[0]
    assert y_tp.mean() < y_st.mean() < height
    # The lines span the plot's width (time axis), not one spot.
    x_tp = np.nonzero(mask_tp.any(axis=0))[0]
    assert x_tp.max() - x_tp.min() > 400
    for name, rgb in (("read", READ), ("assemble", ASSEMBLE), ("consumer wait", WAIT)):
        n, mask = count_color(img, rgb)
        assert n > 20, f"{name} bar not drawn"
        assert np.nonzero(mask.any(axis=1))[0].min() > y_st.max(), f"{name} bar misplaced"
