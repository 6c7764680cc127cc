"""`offsetlake report`: one self-contained HTML page, opened in headless Chromium (Debian package
`chromium`, installed by `make chromium`) with the network shut off, rendered and screenshotted.

Set OFFSETLAKE_ARTIFACTS=DIR to keep the screenshot (report.png) and the page."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from jobs.cli import main as offsetlake
from jobs.commands.audit import write_summary
from support.lake_fixture import operate_lake
from support.operate_lake import DOWNGRADE_FINDINGS, FINDINGS

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND",
                  "--proxy-server=127.0.0.1:9", "--no-first-run", "--user-data-dir={profile}"]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("chromium is not installed: run `make chromium` (apt-get install -y chromium)")
    return found


def browse(page: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    flags = [f.format(profile=tmp / "profile") for f in CHROMIUM_FLAGS]
    return subprocess.run([chromium(), *flags, *extra, page.as_uri()], capture_output=True,
                          text=True, timeout=300)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def report(spark, tmp_path_factory):
    lake = operate_lake(spark, tmp_path_factory)
    # The fixture quarantines 1 of 4 data records: quality fails on the decode error rate only.
    assert offsetlake(["quality", "--lake", str(lake), "--snapshot-id", "s1"]) == 1
    out = tmp_path_factory.mktemp("report") / "report.html"
    # The gate summary the audit would write for the lake's findings, judged at high.
    summary = out.parent / "audit-s1.json"
    write_summary(summary, "s1",
                  [r for r in FINDINGS + DOWNGRADE_FINDINGS if r["snapshot_id"] == "s1"], "high")
    assert offsetlake(["report", "--lake", str(lake), "--out", str(out), "--snapshot-id", "s1",
                       "--audit-summary", str(summary)]) == 0
    return out


def test_report_is_self_contained_and_says_what_the_lake_says(report):
    html = report.read_text()
    for absent in ("http://", "https://", "<script", "<link", "src=", "@import"):
        assert absent not in html, absent
    sections = re.findall(r"<h2>([^<]+)</h2>", html)
    assert sections == ["Gate", "Snapshot", "Findings", "Downgrade readiness", "Groups",
                        "Epoch timelines", "Reconciliation lag", "Members not converged",
                        "Partitions pending revocation", "Open transactions", "Coordinator load",
                        "Offset expiry", "Ghost groups and stale offsets", "Recreated topics",
                        "Churn", "Migration readiness", "Lag at capture time", "Data quality"]
    section = dict(zip(sections, re.split(r"<h2>[^<]+</h2>", html)[1:]))
    assert "<p class='bad'>Gate: FAIL — 4 findings at or above high</p>" \
           "<p>7 findings counted: 1 critical, 3 high, 1 medium, 2 info</p>" in section["Gate"]
    assert re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td>", section["Gate"]) == [
        ("DU-2", "critical", "g-cons"), ("CG-03", "high", "g-cons"),
        ("CG-03", "high", "g-assigning"), ("DU-3", "high", "g-classic")]
    assert "5 (4 data, 1 control)" in section["Snapshot"]
    assert "2026-11-18 11:06:41 .. 2026-11-18 11:07:22 UTC" in section["Snapshot"]
    assert "<td>CG-03</td><td>high</td><td>violation</td><td>2</td>" in section["Findings"]
    assert section["Findings"].count("<rect") == 2  # a bar per rule and severity
    assert "<td>4.0</td><td>no</td><td>BREAK</td>" in section["Downgrade readiness"]
    assert "<td>4.3</td><td><span class='ok'>yes</span></td><td>OK</td>" in section["Downgrade readiness"]
    assert section["Epoch timelines"].count("<svg") == 2  # g-cons and g-classic
    assert "member m3" in section["Epoch timelines"]
    assert "g-cons @ 4" in section["Reconciliation lag"] and "g-cons @ 5" in section["Reconciliation lag"]
    assert "<td>g-cons</td><td>m2</td><td>4</td><td>5</td><td>1</td>" in section["Members not converged"]
    assert "<td>g-classic</td><td>7</td><td>2</td><td>pay, refunds</td>" in section["Open transactions"]
    # partition 0: two keyless records (the cleaner discards them); partition 1: two and a marker
    load = re.findall(r"<tr><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>",
                      section["Coordinator load"])
    assert load == [("0", "2", "0", "1"), ("1", "2", "0", "1")]
    assert section["Coordinator load"].count("<rect") == 2
    # pay-0 carries an explicit expire timestamp an hour after T0 (59 min 18 s after the
    # snapshot's last record); g-cons's offsets count from their commits, under 7 days' retention
    expiry = section["Offset expiry"]
    assert "<p>4 committed offset(s): 0 already past their expiry at the snapshot, 1 expiring " \
           "within the warning window" in expiry
    assert re.findall(r"<tr><td>([^<]+)</td><td>[^<]+</td><td>([^<]+)</td><td>(\d+)</td>"
                      r"<td>([^<]+)</td><td>[^<]+</td><td>([^<]+)</td><td>([^<]+)</td>", expiry) == [
        ("g-classic", "pay", "0", "expire_timestamp", "2026-11-18 12:06:40", "59 min 18 s"),
        ("g-cons", "orders", "0", "commit_timestamp", "2026-11-25 11:06:52", "6 d 23 h"),
        ("g-cons", "orders", "1", "commit_timestamp", "2026-11-25 11:06:53", "6 d 23 h")]
    assert "Every group with offsets has members." in section["Ghost groups and stale offsets"]
    assert "No offset names an older incarnation" in section["Recreated topics"]
    churn = section["Churn"]
    assert "<td>g-cons</td><td>consumer</td><td>2026-11-18 11:00:00</td><td>2</td><td>0</td>" in churn
    assert churn.count("<rect") == 2   # a bar per group and hour
    assert re.findall(r"<tr><td>([^<]+)</td><td>[^<]+</td><td>([^<]+)</td><td>\d+</td><td>(.*?)</td>"
                      r"<td>([^<]*)</td></tr>", section["Migration readiness"]) == [
        ("g-assigning", "downgrade", "no", "no_classic_protocol_members"),
        ("g-cons", "downgrade", "no", "no_classic_protocol_members"),
        ("g-classic", "upgrade", "<span class='ok'>yes</span>", "")]
    lag = section["Lag at capture time"]
    assert "<td>g-cons</td><td>orders</td><td>2</td><td>15</td><td>1</td>" in lag
    assert "total lag per group, capture by capture" in lag   # s0 and s1: a history line
    assert "capture (1 = s0, 2 = s1)" in lag
    quality = section["Data quality"]
    assert "expectations failed" in quality
    assert quality.index("FAIL") < quality.index("PASS")
    assert "<td>FAIL</td><td>snapshot_accounting</td><td>expect_column_values_to_be_between</td>" \
           "<td>decode_error_rate</td>" in quality
    assert quality.count("<td>FAIL</td>") == 1


def test_an_audit_summary_of_another_snapshot_is_refused(spark, tmp_path_factory, tmp_path, capsys):
    lake = operate_lake(spark, tmp_path_factory)
    summary = tmp_path / "audit-s0.json"
    write_summary(summary, "s0", [], "high")
    out = tmp_path / "report.html"
    assert offsetlake(["report", "--lake", str(lake), "--out", str(out), "--snapshot-id", "s1",
                       "--audit-summary", str(summary)]) == 2
    assert "is the audit summary of snapshot s0, not s1" in capsys.readouterr().err
    assert not out.exists()


def test_chromium_renders_the_report_offline_and_screenshots_it(report, tmp_path):
    dom = browse(report, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-3000:]
    assert dom.stdout.count("<svg") == 7 and "offsetlake report: snapshot s1" in dom.stdout
    shot = tmp_path / "report.png"
    proc = browse(report, tmp_path, f"--screenshot={shot}", "--window-size=1280,4600")
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-3000:]
    assert png_size(shot) == (1280, 4600)
    assert shot.stat().st_size > 50_000  # text, tables and plots, not a blank page
    keep = os.environ.get("OFFSETLAKE_ARTIFACTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")
        shutil.copy(report, Path(keep) / "report.html")
