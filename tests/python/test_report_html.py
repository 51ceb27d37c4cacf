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
                        "--num-workers", "2", "--warmup-batches", "2", "--seconds", "1.5",
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
    # The lines span most of the plot's width (time axis, which ends at the round tick past the
    # last sample), not one spot.
    x_tp = np.nonzero(mask_tp.any(axis=0))[0]
    assert x_tp.max() - x_tp.min() > 300
    for name, rgb in (("read", READ), ("assemble", ASSEMBLE), ("consumer wait", WAIT)):
        n, mask = count_color(img, rgb)
        assert n > 20, f"{name} bar not drawn"
        assert np.nonzero(mask.any(axis=1))[0].min() > y_st.max(), f"{name} bar misplaced"


def tick_values(dom, cls):
    """The numbers of an axis' tick labels, units stripped ("250 M" -> 250e6, "25%" -> 25)."""
    scale = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
    values = []
    for label in re.findall(rf'class="{cls}"[^>]*>([^<]*)<', dom):
        m = re.fullmatch(r"([0-9.]+) ?([kMGTP]?)(%|x| s)?", label)
        assert m, f"tick label {label!r} is not a plain number with a unit"
        values.append(float(m.group(1)) * scale[m.group(2)])
    return values


def assert_round_axis(values):
    assert len(values) >= 3 and values[0] == 0, values
    steps = np.diff(values)
    assert np.allclose(steps, steps[0], rtol=1e-9), values
    mantissa = steps[0] / 10 ** np.floor(np.log10(steps[0]))
    assert any(abs(mantissa - m) < 1e-9 for m in (1, 2, 2.5, 5)), values


def test_report_axis_ticks_are_round(report):
    dom = report.read_text()
    # Two time plots: tokens/s and the stall share, each with round y and x ticks.
    ys, xs = tick_values(dom, "ytick"), tick_values(dom, "xtick")
    n_y = len(re.findall(r'class="ytick"', dom))
    assert n_y == len(ys) >= 6
    for plot in re.findall(r'<svg id="plot-(?:throughput|stall)".*?</svg>', dom, re.S):
        assert_round_axis(tick_values(plot, "ytick"))
        assert_round_axis(tick_values(plot, "xtick"))
    assert all(v <= 100 for v in tick_values(
        re.search(r'<svg id="plot-stall".*?</svg>', dom, re.S).group(0), "ytick"))


RATIO = (0x17, 0xBE, 0xCF)
PASS_GREEN = (0x2A, 0x7D, 0x2A)


@pytest.fixture(scope="module")
def doctor_reports(tmp_path_factory, stoker_cli):
    d = tmp_path_factory.mktemp("doctor")
    data = d / "tokens.npy"
    np.save(data, np.random.default_rng(2).integers(0, 50000, (600, 1024), dtype=np.uint16))
    out = {}
    # 1,000 tokens/s: any loader passes. 1e15 tokens/s: none does.
    for name, rate, code in (("pass", "1000", 0), ("fail", "1e15", 1)):
        html = d / f"doctor-{name}.html"
        r = subprocess.run([stoker_cli, "doctor", str(data), "--seq-len", "512", "--batch-size",
                            "8", "--num-workers", "2", "--warmup-batches", "2", "--seconds", "1.5",
                            "--train-tokens-per-s", rate, "--report", str(html)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == code, r.stdout + r.stderr
        assert f"report written to {html}" in r.stdout
        out[name] = html
    return out


def test_doctor_report_shows_verdict_ratio_rule_and_advice(doctor_reports):
    for name, html in doctor_reports.items():
        text = html.read_text()
        assert "<script" not in text and not re.search(r"""(src|href)\s*=""", text)
        r = run_chromium("--dump-dom", f"file://{html}")
        assert r.returncode == 0, r.stderr
        dom = r.stdout
        verdict = re.search(r'<p id="verdict" class="verdict (pass|fail)">([^<]*)<', dom)
        assert verdict and verdict.group(1) == name, dom[:2000]
        assert verdict.group(2).startswith("PASS" if name == "pass" else "FAIL")
        assert "delivered / consumed" in verdict.group(2)
        assert 'id="plot-ratio"' in dom and 'class="rule"' in dom and ">1.2x<" in dom
        pts = re.search(r'<svg id="plot-ratio".*?<polyline class="series"[^>]*points="([^"]*)"',
                        dom, re.S)
        assert pts and len(pts.group(1).split()) >= 4
        plot = re.search(r'<svg id="plot-ratio".*?</svg>', dom, re.S).group(0)
        assert_round_axis(tick_values(plot, "ytick"))
        assert len(re.findall(r"<li>", re.search(r'<ul id="advice">.*?</ul>', dom, re.S)
                              .group(0))) >= 1
        assert 'data-key="tokens_per_s"' in dom


def test_doctor_report_is_painted(doctor_reports, tmp_path):
    png = tmp_path / "doctor.png"
    r = run_chromium(f"--screenshot={png}", "--window-size=820,1200",
                     f"file://{doctor_reports['pass']}")
    assert png.exists(), r.stderr
    img = decode_png(png.read_bytes())
    n_ratio, mask_ratio = count_color(img, RATIO)
    n_green, mask_green = count_color(img, PASS_GREEN)
    assert n_green > 500, "verdict box not drawn"
    assert n_ratio > 200, "ratio line not drawn"
    x = np.nonzero(mask_ratio.any(axis=0))[0]
    assert x.max() - x.min() > 300
    # The verdict comes above the plot.
    assert np.nonzero(mask_green.any(axis=1))[0].mean() < np.nonzero(mask_ratio.any(axis=1))[0].mean()
