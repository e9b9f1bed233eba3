"""`satcc report`: figures drawn exactly when a campaign has their data, figure files, and a
self-contained HTML report checked in real headless Chromium."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from satcc.analyze import synth
from satcc.analyze.synth import Conversation
from satcc.campaign import spec
from satcc.campaign.execute import run_campaign
from satcc.cli import main
from satcc.report import build_report
from satcc.report.build import to_toml
from tests.campaign_helpers import write_campaign
from tests.helpers import requires_sim

pytestmark = requires_sim

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# one flow, 40 s: long enough for the congestion-avoidance ramp; model vs sim over loss x MSS;
# plus field measurements: a `ping -D` log and a capture with a retransmission
LOSS_BASE = """
[scenario]
name = "lossy"
duration = "40 s"
bin = "200 ms"

[[link]]
a = "snd"
b = "rcv"
rate = "10 Mbit/s"
delay = "20 ms"
queue = "100 pkt"

[[flow]]
name = "bulk"
from = "snd"
to = "rcv"
cca = "reno"
"""

LOSS_CAMPAIGN = """
[campaign]
name = "lossy"
scenario = "base.toml"

[matrix]
"scenario.engine" = ["model", "sim"]
"link[0].loss" = [1e-4, 1e-3]
"flow.*.mss" = [1000, 1448]

[[analyze]]
files = ["field/*.txt", "field/*.pcap"]
"""


def ping_log(start_epoch: float, rtts: list[float | None]) -> str:
    lines = ["PING 203.0.113.9 (203.0.113.9) 56(84) bytes of data."]
    for i, rtt in enumerate(rtts, start=1):
        if rtt is not None:
            lines.append(
                f"[{start_epoch + i:.6f}] 64 bytes from 203.0.113.9: icmp_seq={i} "
                f"ttl=57 time={rtt} ms"
            )
    got = sum(r is not None for r in rtts)
    lines += [
        "",
        "--- 203.0.113.9 ping statistics ---",
        (
            f"{len(rtts)} packets transmitted, {got} received, "
            f"{100 * (1 - got / len(rtts)):.0f}% packet loss, time {len(rtts)}000ms"
        ),
    ]
    return "\n".join(lines) + "\n"


def capture(path: Path) -> None:
    """A bulk transfer with one segment lost and resent (study 003 Fig. 6's pattern)."""
    c = Conversation()
    t = 0.0
    pkts = [c.syn(t), c.synack(t + 0.05), c.ack(t + 0.1)]
    seq, mss = 1, 1000
    for k in range(40):
        t = 0.1 + k * 0.002
        if k != 10:
            pkts.append(c.data(t, seq + k * mss, mss))
        pkts.append(c.sack(t + 0.05, seq + (min(k, 10)) * mss if k >= 10 else seq + (k + 1) * mss))
    pkts.append(c.data(0.3, seq + 10 * mss, mss))  # the retransmission
    pkts.append(c.sack(0.35, seq + 40 * mss))
    synth.write_pcap(path, sorted(pkts, key=lambda p: p.t))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("small")
    run_campaign(spec.load(write_campaign(tmp)), tmp / "out", jobs=2, progress=False)
    return tmp / "out"


@pytest.fixture(scope="module")
def lossy(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lossy")
    field = tmp / "field"
    field.mkdir()
    day = 1_700_000_000 - 1_700_000_000 % 86400  # a UTC midnight
    (field / "morning.txt").write_text(ping_log(day + 9 * 3600, [30.1, 31.5, None, 45.0, 33.2]))
    (field / "evening.txt").write_text(ping_log(day + 20 * 3600, [60.2, 75.5, 58.0, None, 90.1]))
    capture(field / "transfer.pcap")
    c = spec.load(write_campaign(tmp, LOSS_CAMPAIGN, LOSS_BASE))
    r = run_campaign(c, tmp / "out", jobs=2, progress=False)
    assert r.count("failed") == 0, [x.error for x in r.reports if x.error]
    return tmp / "out"


def _ids(report) -> tuple[set[str], dict[str, str]]:
    drawn = {f.id.split("_")[0] if f.id.startswith("traces") else f.id for f in report.drawn}
    return drawn, {f.id: f.skipped for f in report.skipped}


def test_small_campaign_draws_cca_figures_and_fairness_and_says_why_others_are_skipped(
    small, tmp_path
):
    report = build_report(small, tmp_path / "r", ["html", "png"])
    drawn, skipped = _ids(report)
    assert drawn == {
        "timeseries_cca",
        "box_throughput",
        "box_retx",
        "rtt_fairness",
        "traces",
        "cdfs",
        "throughput_delay",
    }
    assert set(skipped) == {"rtt_day", "mss", "engines_loss", "seqack", "ca_ramp", "fidelity"}
    assert skipped["fidelity"] == "not a `satcc fidelity` directory"
    assert "MSS axis" in skipped["mss"] and "loss axis" in skipped["engines_loss"]
    for f in report.drawn:
        assert [p.suffix for p in f.files] == [".png"]
        assert f.files[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = html.unescape((tmp_path / "r" / "report.html").read_text())
    for f in report.skipped:
        assert f.skipped in text


def test_loss_campaign_draws_model_vs_sim_mss_ramp_rtt_day_and_seqack(lossy, tmp_path):
    report = build_report(lossy, tmp_path / "r", ["pdf", "svg"])
    drawn, _skipped = _ids(report)
    assert {"engines_loss", "mss", "ca_ramp", "rtt_day", "seqack", "traces"} <= drawn
    assert report.html_path is None
    for f in report.drawn:
        suffixes = sorted(p.suffix for p in f.files)
        assert suffixes == [".pdf", ".svg"]
        pdf = next(p for p in f.files if p.suffix == ".pdf").read_bytes()
        assert pdf.startswith(b"%PDF") and b"CreationDate" not in pdf
    # the same data gives the same figure bytes
    again = build_report(lossy, tmp_path / "r2", ["svg", "pdf"])
    for a, b in zip(report.drawn, again.drawn, strict=True):
        for pa, pb in zip(sorted(a.files), sorted(b.files), strict=True):
            assert pa.read_bytes() == pb.read_bytes(), pa.name


def test_ramp_fit_reports_the_reno_slope_of_about_one_packet_per_rtt(lossy):
    from satcc.report import figures as F
    from satcc.store import open_store

    with open_store(lossy) as s:
        drawn = F.ca_ramp(F.Data(s, s.index["axes"]))
    label = drawn.fig.axes[1].get_legend().get_texts()[1].get_text()
    per_rtt = float(re.search(r"= ([0-9.]+) pkt per RTT", label).group(1))
    assert 0.5 <= per_rtt <= 1.5  # RFC 5681 §3.1: one segment per RTT (Linux counts acked)


def test_toml_of_a_run_scenario_round_trips():
    import tomllib

    doc = {
        "scenario": {"name": "x", "duration": "2 s"},
        "link": [{"a": "a", "b": "b", "model": {"kind": "geo", "loss": 1e-4}}],
        "flow": [{"from": "a", "to": "b", "cc": {"beta": 0.5}, "mss": 1300}],
    }
    assert tomllib.loads(to_toml(doc)) == doc


def test_cli_report_writes_html_and_figures(small, tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["report", str(small), "--out", str(out), "--format", "html,svg"]) == 0
    text = capsys.readouterr().out
    assert "figures drawn" in text and "figures skipped" in text and "mss:" in text
    assert (out / "report.html").is_file() and (out / "fig_box_retx.svg").is_file()
    assert main(["report", str(small), "--out", str(out), "--format", "gif"]) == 2


def _chromium(html: Path, tmp: Path) -> tuple[str, str]:
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={tmp / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=5000",
        "--dump-dom",
        html.resolve().as_uri(),
    ]
    p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=90)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout, p.stderr


def _console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (make build installs it)"
)
def test_html_report_renders_in_headless_chromium_with_figures_and_no_console_errors(
    lossy, tmp_path
):
    report = build_report(lossy, tmp_path / "r", ["html"])
    html_text = report.html_path.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html_text)
    dom, stderr = _chromium(report.html_path, tmp_path)
    n = len(report.drawn)
    assert f'data-figures="ok {n}"' in dom, (dom[:300], _console(stderr))
    # the interactive uPlot charts (vendored and inlined) were built offline
    assert re.search(r'data-charts="ok [1-9]', dom) and 'class="uplot' in dom
    assert _console(stderr) == []
    assert "Campaign lossy" in dom and "Skipped figures" in dom
    # the harness itself can fail: a broken image and a script error are both seen
    broken = tmp_path / "broken.html"
    broken.write_text(
        html_text.replace(
            'src="data:image/png;base64,', 'src="data:image/png;base64,AAAA', 1
        ).replace("</body>", "<script>undefinedFunction()</script></body>")
    )
    dom2, stderr2 = _chromium(broken, tmp_path)
    assert 'data-figures="broken img-' in dom2
    assert any("undefinedFunction" in line for line in _console(stderr2))


def test_names_with_mathtext_dollars_do_not_break_the_report(tmp_path):
    # Before: a flow named like matplotlib math ("$\foo$") crashed `satcc report`: no report.
    from tests.campaign_helpers import BASE_SCENARIO, SMALL_CAMPAIGN

    base = BASE_SCENARIO.replace('name = "short"', "name = '$\\foo$'").replace(
        'name = "long"', "name = 'cost $^$'"
    )
    campaign = SMALL_CAMPAIGN.replace("repetitions = 2", "repetitions = 1").replace(
        '"link[1].delay" = ["5 ms", "20 ms"]', ""
    )
    run_campaign(
        spec.load(write_campaign(tmp_path, campaign, base)),
        tmp_path / "out",
        jobs=1,
        progress=False,
    )
    assert main(["report", str(tmp_path / "out"), "--out", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "report.html").is_file()


def test_cdfs_and_the_throughput_delay_plane_have_one_series_per_cca(small, tmp_path):
    from satcc.report import figures as F
    from satcc.store import open_store

    with open_store(small) as store:
        data = F.Data(store, store.index.get("axes", []))
        cdf = F.cdfs(data).fig
        plane = F.throughput_delay(data).fig
    # one row per condition (issue 29: conditions were pooled), 8 flows per CCA in all
    goodput_axes = cdf.get_axes()[::2]
    assert len(goodput_axes) > 1
    counts = {"reno": 0, "cubic": 0}
    for a in goodput_axes:
        labels = [t.get_text() for t in a.get_legend().get_texts()]
        assert [lb.split()[0] for lb in labels] == ["reno", "cubic"]
        for lb in labels:
            counts[lb.split()[0]] += int(lb.split("(")[1].rstrip(")"))
        assert all(line.get_ydata()[-1] == 1.0 for line in a.get_lines())
    assert counts == {"reno": 8, "cubic": 8}
    panels = [a for a in plane.get_axes() if a.axison]
    assert len(panels) == len(goodput_axes)
    ax = panels[0]
    assert ax.xaxis_inverted() and [t.get_text() for t in ax.get_legend().get_texts()] == [
        "reno",
        "cubic",
    ]


def test_each_run_links_its_own_plot_and_the_tables_download_as_csv(small, tmp_path):
    from satcc.report import build as B

    def extra(ctx):
        return f'<h2 id="extra">Extra</h2><p>{len(ctx.runs)} runs</p>'

    B.register_section(B.Section("extra", "Extra", extra), before="points")
    try:
        report = build_report(small, tmp_path / "r", ["html"])
    finally:
        B.SECTIONS[:] = [s for s in B.SECTIONS if s.id != "extra"]
    html = (tmp_path / "r" / "report.html").read_text()
    assert report.run_plots and len(report.run_plots) <= B.MAX_RUN_PLOTS
    for run_id, rel in report.run_plots.items():
        assert (tmp_path / "r" / rel).read_bytes()[:4] == b"\x89PNG"
        assert f'<a href="{rel}"><code>{run_id}</code></a>' in html
    for name in ("runs.csv", "flows.csv"):
        assert (tmp_path / "r" / name).read_text().count("\n") > 1 and f'href="{name}"' in html
    assert html.index('id="extra"') < html.index('id="points"') and '<a href="#extra">' in html
    assert "<th" in html and ">engines</th>" in html


def test_no_html_is_built_with_f_strings():
    """HTML comes from jinja2 templates (autoescaped); an f-string with a tag in it is where an
    unescaped value slips in."""
    package = Path(__file__).resolve().parents[1] / "python" / "satcc"
    tag = re.compile(
        r"""\bf(["'])[^"'\n]*<(/?)(table|thead|tbody|tr|td|th|div|ul|li|p|h[1-6]|figure|"""
        r"""figcaption|img|a|pre|code|details|summary|script|style|b|i|br)\b"""
    )
    offenders = [
        f"{path.relative_to(package)}:{n}"
        for path in sorted(package.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if tag.search(line)
    ]
    assert offenders == []
