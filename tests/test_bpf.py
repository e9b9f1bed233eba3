"""BPF struct_ops congestion controls (satcc.emu.bpf, bpf/*.bpf.c).

Pure tests (names, parameter quantisation, validation) run anywhere; the rest need root, clang,
bpftool and a kernel with BTF and struct_ops, and skip with the reason otherwise. Real flows run
only inside a throwaway namespace pair (satcc-bpftest-<pid>-a/b joined by a veth with a tbf
qdisc); the namespaces are removed in finally blocks and every test unregisters what it
registered.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from satcc.emu import bpf

FLOW_S = 1.0
RATE = "100mbit"  # tbf: forces queueing and losses, so recovery hooks run too
NS_A = f"satcc-bpftest-{os.getpid()}-a"
NS_B = f"satcc-bpftest-{os.getpid()}-b"
ADDR_A, ADDR_B = "10.250.0.1", "10.250.0.2"
PORT = 5201
TCPI_OPT_ECN = 8  # include/uapi/linux/tcp.h

# Minimum payload a working congestion control moves in FLOW_S at RATE (5 % of capacity:
# only "it carries a flow", not a goodput claim).
MIN_BYTES = int(100e6 / 8 * FLOW_S * 0.05)


def _host_reason() -> str | None:
    if sys.platform != "linux":
        return "Linux only"
    if os.geteuid() != 0:
        return "needs root (CAP_BPF, CAP_NET_ADMIN, network namespaces)"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"{tool} not installed (apt-get install iproute2)"
    info = bpf.available()
    if not info["ok"]:
        gaps = [
            f"{c['name']}: {c['detail']} (fix: {c['fix']})" for c in info["checks"] if not c["ok"]
        ]
        return "BPF struct_ops congestion controls unavailable: " + "; ".join(gaps)
    return None


REASON = _host_reason()
needs_host = pytest.mark.skipif(REASON is not None, reason=REASON or "")


# -- pure: names, defines, validation ----------------------------------------------------------


def _hz_known() -> bool:
    return bpf.kernel_hz() is not None


def test_default_parameters_register_under_the_plain_satcc_name():
    for name in ("hybla", "vegas", "yeah", "dctcp"):
        assert bpf.kernel_name(name) == f"satcc_{name}"
        assert bpf.kernel_name(name, {}) == f"satcc_{name}"
    # Spelling out a default is the same parameter set.
    assert bpf.kernel_name("hybla", {"rtt0": 25.0}) == "satcc_hybla"
    assert bpf.kernel_name("vegas", {"alpha": 2, "beta": 4.0}) == "satcc_vegas"


def test_parameter_sets_get_distinct_names_that_fit_tcp_ca_name_max():
    names = {bpf.kernel_name("hybla", {"rtt0": r}) for r in (1.0, 10.0, 50.0, 100.0, 600.0)}
    assert len(names) == 5
    yeah = bpf.kernel_name("yeah", {"alpha": 40.0})
    assert yeah == bpf.kernel_name("yeah", {"alpha": 40.0}), "deterministic"
    for n in names | {yeah}:
        assert n.startswith("satcc_") and len(n) <= bpf.TCP_CA_NAME_MAX - 1
        assert len(n) == bpf.TCP_CA_NAME_MAX - 1, "the digest fills the name"


def test_a_sender_cwnd_clamp_compiles_into_hyblas_program_under_its_own_name():
    # The flow's cwnd_clamp is the kernel's snd_cwnd_clamp, which a BPF congestion control may
    # not write: it becomes HYBLA_CWND_CLAMP (hybla_init's 65535 when unset).
    assert "HYBLA_CWND_CLAMP" not in bpf.defines("hybla", {"rtt0": 25.0})
    d = bpf.defines("hybla", {"rtt0": 25.0}, cwnd_clamp=550)
    assert d == {"HYBLA_RTT0_US": "25000", "HYBLA_CWND_CLAMP": "550U"}
    capped = bpf.kernel_name("hybla", {"rtt0": 25.0}, cwnd_clamp=550)
    assert capped != bpf.kernel_name("hybla", {"rtt0": 25.0}) == "satcc_hybla"
    assert capped != bpf.kernel_name("hybla", {"rtt0": 25.0}, cwnd_clamp=551)
    assert capped.startswith("satcc_hybla_") and len(capped) == bpf.TCP_CA_NAME_MAX - 1


@pytest.mark.parametrize(
    ("name", "clamp", "match"),
    [
        ("vegas", 550, r"cwnd_clamp: the emulator caps the sender's cwnd only in hybla"),
        ("hybla", 0, r"cwnd_clamp: expected 1\.\.4294967295 packets, found 0"),
        ("hybla", 1 << 32, r"cwnd_clamp: expected 1\.\.4294967295 packets"),
        ("hybla", 550.5, r"cwnd_clamp: expected whole packets, found 550\.5"),
        ("hybla", True, r"cwnd_clamp: expected whole packets, found True"),
    ],
)
def test_a_sender_cwnd_clamp_a_program_cannot_apply_is_refused(name, clamp, match):
    with pytest.raises(bpf.BpfError, match=match):
        bpf.kernel_name(name, None, cwnd_clamp=clamp)


@pytest.mark.kernel
@needs_host
def test_the_compiled_clamp_replaces_hybla_inits_65535_in_the_source(tmp_path, monkeypatch):
    # Preprocess hybla.bpf.c with the defines build() passes: the cap at the end of
    # hybla_cong_avoid must be the flow's, not a #define in the file overriding -D.
    monkeypatch.setenv("SATCC_BPF_CACHE", str(tmp_path))
    kdir = bpf.vmlinux_h().parent
    d = bpf.defines("hybla", {"rtt0": 25.0}, cwnd_clamp=550)
    out = subprocess.run(
        [
            "clang",
            "-E",
            "-P",
            "-target",
            "bpf",
            "-I",
            str(kdir),
            "-I",
            str(bpf.source_dir()),
            *[f"-D{k}={v}" for k, v in sorted(d.items())],
            str(bpf.source_dir() / "hybla.bpf.c"),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    cap = out[out.index("hybla_cong_avoid") :]
    cap = cap[: cap.index("hybla_ssthresh")]
    assert "(550U)" in cap and "65535" not in cap


@pytest.mark.skipif(not _hz_known(), reason="kernel CONFIG_HZ unknown on this host")
def test_cubic_parameters_quantise_as_the_rust_twin_does():
    d = bpf.defines("cubic")
    assert d["CUBIC_BETA"] == "717" and d["CUBIC_BIC_SCALE"] == "41"  # tcp_cubic.c
    assert d["CUBIC_HZ"] == str(bpf.kernel_hz()) == d["CUBIC_KERNEL_HZ"]
    d = bpf.defines("cubic", {"beta": 0.8, "c": 0.1, "hystart_detect": "delay", "hz": 1000.0})
    assert d["CUBIC_BETA"] == str(round(0.8 * 1024)) and d["CUBIC_BIC_SCALE"] == "10"
    assert d["CUBIC_HYSTART_DETECT"] == "2" and d["CUBIC_HZ"] == "1000"
    # eq. 7's constant: a * cbrt(rtt_unit in us) in Q43.
    d = bpf.defines("cubic", {"k_mode": "scaled", "a": 1.5, "rtt_unit": 50.0})
    assert d["CUBIC_K_MODE"] == "2"
    num = int(d["CUBIC_K_NUM_Q43"].removesuffix("ULL"))
    assert abs(num / 2**43 - 1.5 * 50_000 ** (1 / 3)) < 1e-9
    d = bpf.defines("cubic", {"k_mode": "table", "k_table": [[10.0, 1.0], [50.0, 0.5]]})
    assert d["CUBIC_K_TABLE_RTT_US"] == "{10000U,50000U}"
    assert d["CUBIC_K_TABLE_F_Q20"] == "{1048576ULL,524288ULL}"


@pytest.mark.skipif(not _hz_known(), reason="kernel CONFIG_HZ unknown on this host")
def test_bad_parameters_are_refused_before_anything_is_built():
    cases = [
        ("hybla", {"rtt": 25.0}),  # unknown key
        ("vegas", {"alpha": 5.0, "beta": 4.0}),  # alpha > beta
        ("dctcp", {"shift_g": 11.0}),  # 0..10
        ("yeah", {"delta": 2.5}),  # integer
        ("cubic", {"k_mode": "table"}),  # k_table required
        ("cubic", {"k_mode": "table", "k_table": [[50.0, 1.0], [10.0, 2.0]]}),  # not increasing
        ("cubic", {"k_mode": "table", "k_table": [[float(i), 1.0] for i in range(1, 18)]}),
        ("reno", {}),  # a kernel built-in, not a BPF program
    ]
    for name, params in cases:
        with pytest.raises(bpf.BpfError):
            bpf.kernel_name(name, params)


@pytest.mark.kernel
def test_measured_hz_agrees_with_the_kernel_config():
    # The measurement is the fallback for kernels without an exposed config; where both exist
    # (root, CONFIG_IKCONFIG_PROC or /boot/config-*) they must agree.
    configured = bpf._hz_from_config()
    if configured is None or os.geteuid() != 0:
        pytest.skip("needs the kernel config and root (/proc/timer_list)")
    assert bpf._hz_measured() == configured
    assert bpf.kernel_hz() == configured


# -- cubic's fixed point, compiled natively -----------------------------------------------------

HARNESS = """
#include <stdio.h>
#include <stdint.h>
typedef uint8_t __u8;
typedef uint32_t __u32;
typedef uint64_t __u64;
#include "cubic_math.h"
int main(void)
{
	char op[4];
	unsigned long long a, b;

	while (scanf("%3s %llu %llu", op, &a, &b) == 3) {
		if (op[0] == 'k')
			printf("%u %u\\n", cubic_root(CUBE_FACTOR * a), cubic_k_of(a, b));
		else if (op[0] == 't')
			printf("%u\\n", cubic_term(a));
		else
			printf("%u\\n", cubic_root(a));
	}
	return 0;
}
"""


def cubic_math(tmp_path: Path, params: dict, queries: list[str]) -> list[list[int]]:
    """Compile bpf/cubic_math.h natively with the defines `params` compile to, and run it."""
    cc = shutil.which("clang")
    if cc is None:
        pytest.skip("clang not installed")
    src = tmp_path / "harness.c"
    src.write_text(HARNESS)
    exe = tmp_path / "harness"
    d = {k: v for k, v in bpf.defines("cubic", params).items() if k.startswith("CUBIC_")}
    subprocess.run(
        [
            cc,
            "-O2",
            "-Wall",
            "-Werror",
            "-I",
            str(bpf.source_dir()),
            *[f"-D{k}={v}" for k, v in d.items()],
            str(src),
            "-o",
            str(exe),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    out = subprocess.run(
        [str(exe)],
        input="\n".join(queries) + "\n",
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    return [[int(x) for x in line.split()] for line in out.splitlines()]


@pytest.mark.skipif(not _hz_known(), reason="kernel CONFIG_HZ unknown on this host")
def test_cubic_root_and_cubic_term_match_exact_arithmetic(tmp_path):
    args = [(1 << s) + m * ((1 << s) // 7) for s in range(31, 62) for m in range(7)]
    offs = [0, 1, 1000, 5000, 100_000, (1 << 21) - 1, 1 << 21, 1 << 30]
    got = cubic_math(tmp_path, {}, [f"r {a} 0" for a in args] + [f"t {o} 0" for o in offs])
    for a, (root,) in zip(args, got, strict=False):
        assert abs(root - a ** (1 / 3)) / a ** (1 / 3) < 0.002, a  # kernel: ~0.2 %
    scale = 41 * 10  # cube_rtt_scale at bic_scale 41
    for o, (term,) in zip(offs, got[len(args) :], strict=True):
        exact = (scale * o**3) >> 40  # eq. 1: C (t - K)^3
        assert term == (exact if o < 1 << 21 else 2**32 - 1), o


@pytest.mark.skipif(not _hz_known(), reason="kernel CONFIG_HZ unknown on this host")
@pytest.mark.parametrize(
    "params",
    [
        {"k_mode": "cbrt_rtt"},
        {"k_mode": "scaled", "a": 1.5, "rtt_unit": 50.0},
        {"k_mode": "scaled", "a": 0.3, "rtt_unit": 600.0},
        {"k_mode": "table", "k_table": [[10.0, 1.0], [50.0, 0.5], [200.0, 0.25]]},
        {"k_mode": "table", "k_table": [[20.0, 0.5], [600.0, 3.0]]},
    ],
    ids=["cbrt_rtt", "scaled", "scaled-geo", "table-falling", "table-rising"],
)
def test_k_modes_scale_k_within_one_unit_of_the_rust_twins_float_factor(tmp_path, params):
    # cubic.rs KMode::factor: eq. 5 interpolates in ms, eqs. 6-7 a / cbrt(RTT / rtt_unit);
    # K' = round(K f). The BPF program's fixed point must agree within 1/1024 s.
    unit_us = params.get("rtt_unit", 100.0) * 1000.0
    a = params.get("a", 1.0) if params["k_mode"] == "scaled" else 1.0

    def factor(rtt_us: int) -> float:
        if params["k_mode"] == "table":
            pts = params["k_table"]
            x = rtt_us / 1000.0
            if x <= pts[0][0]:
                return pts[0][1]
            if x >= pts[-1][0]:
                return pts[-1][1]
            for (x0, y0), (x1, y1) in itertools.pairwise(pts):
                if x < x1:
                    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
        return a / (rtt_us / unit_us) ** (1 / 3)

    rtts = [1, 500, 5_000, 20_000, 33_333, 100_000, 250_000, 600_000, 2_000_000]
    dws = [1, 10, 300, 5_000, 100_000]
    queries = [f"k {dw} {rtt}" for rtt in rtts for dw in dws] + [f"k {dw} 0" for dw in dws]
    got = cubic_math(tmp_path, params, queries)
    for q, (k_stock, k_mode) in zip(queries, got, strict=True):
        rtt = q.split()[2]
        if rtt == "0":
            assert k_mode == k_stock, "no RTT sample: K unchanged"
            continue
        expected = round(k_stock * factor(int(rtt)))
        assert abs(k_mode - expected) <= 1, (q, k_stock, k_mode, expected)


# -- build -------------------------------------------------------------------------------------


@pytest.mark.kernel
@needs_host
def test_build_compiles_once_per_kernel_source_and_parameter_set(tmp_path, monkeypatch):
    monkeypatch.setenv("SATCC_BPF_CACHE", str(tmp_path))
    obj = bpf.build("hybla", {"rtt0": 50.0})
    assert obj.exists() and obj.is_relative_to(tmp_path)
    assert obj.read_bytes()[:4] == b"\x7fELF"
    assert (obj.parent / "vmlinux.h").exists(), "vmlinux.h generated from the running kernel"
    assert obj.parent.name.startswith(os.uname().release)
    mtime = obj.stat().st_mtime_ns
    assert bpf.build("hybla", {"rtt0": 50.0}) == obj, "cached"
    assert obj.stat().st_mtime_ns == mtime, "not recompiled"
    other = bpf.build("hybla", {"rtt0": 60.0})
    assert other != obj and other.exists()


# -- namespaces and flows ----------------------------------------------------------------------


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@pytest.fixture(scope="module")
def netns() -> Iterator[tuple[str, str]]:
    if REASON is not None:
        pytest.skip(REASON)
    try:
        _ip("netns", "add", NS_A)
        _ip("netns", "add", NS_B)
        _ip("-n", NS_A, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", NS_B)
        for ns, dev, addr in ((NS_A, "va", ADDR_A), (NS_B, "vb", ADDR_B)):
            _ip("-n", ns, "addr", "add", f"{addr}/30", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        subprocess.run(
            [
                "tc",
                "-n",
                NS_A,
                "qdisc",
                "add",
                "dev",
                "va",
                "root",
                "tbf",
                "rate",
                RATE,
                "burst",
                "32kb",
                "latency",
                "5ms",
            ],
            check=True,
            capture_output=True,
            timeout=10,
        )
        yield NS_A, NS_B
    finally:
        for ns in (NS_A, NS_B):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10, check=False)


@pytest.fixture()
def clean_registry() -> Iterator[None]:
    """Every test leaves no satcc_ congestion control behind, whatever happens."""
    try:
        yield
    finally:
        bpf.unregister_all()


SERVER = textwrap.dedent("""
    import json, socket, sys
    cc, port = sys.argv[1], int(sys.argv[2])
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    srv.bind(("0.0.0.0", port))
    srv.listen(1)
    print("READY", flush=True)
    srv.settimeout(20)
    conn, _ = srv.accept()
    got = 0
    while True:
        data = conn.recv(1 << 16)
        if not data:
            break
        got += len(data)
    name = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    print(json.dumps({"bytes": got, "cc": name.split(b"\\0")[0].decode()}), flush=True)
""")

CLIENT = textwrap.dedent("""
    import json, socket, struct, sys, time
    cc, addr, port, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    def info(s):
        raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
        return {"options": raw[5], "rtt_us": struct.unpack_from("I", raw, 68)[0],
                "cwnd": struct.unpack_from("I", raw, 80)[0],
                "total_retrans": struct.unpack_from("I", raw, 100)[0],
                "delivered_ce": struct.unpack_from("I", raw, 196)[0]}
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    s.settimeout(10)
    s.connect((addr, port))
    first = info(s)
    chunk = b"x" * (1 << 16)
    sent, end = 0, time.monotonic() + secs
    while time.monotonic() < end:
        sent += s.send(chunk)
    last = info(s)
    name = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
    s.close()
    print(json.dumps({"sent": sent, "cc": name.split(b"\\0")[0].decode(), "first": first,
                      "last": last}), flush=True)
""")


def run_flow(
    ns: tuple[str, str], client_cc: str, server_cc: str | None = None, secs: float = FLOW_S
) -> tuple[dict, dict]:
    """One TCP flow from ns[0] to ns[1]; returns (client report, server report)."""
    server = subprocess.Popen(
        [
            "ip",
            "netns",
            "exec",
            ns[1],
            sys.executable,
            "-c",
            SERVER,
            server_cc or client_cc,
            str(PORT),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.strip() == "READY", server.stderr.read() if server.stderr else line
        client = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                ns[0],
                sys.executable,
                "-c",
                CLIENT,
                client_cc,
                ADDR_B,
                str(PORT),
                str(secs),
            ],
            capture_output=True,
            text=True,
            timeout=secs + 20,
            check=False,
        )
        assert client.returncode == 0, client.stderr
        out, err = server.communicate(timeout=20)
        assert server.returncode == 0, err
        return json.loads(client.stdout), json.loads(out)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def available_ccas() -> list[str]:
    return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()


FLOWS = [
    ("hybla", {}),
    ("vegas", {}),
    ("yeah", {}),
    ("dctcp", {}),
    ("cubic", {}),
    ("cubic", {"k_mode": "table", "k_table": [[1.0, 2.0], [100.0, 0.5]]}),
    ("cubic", {"k_mode": "cbrt_rtt"}),
    ("cubic", {"k_mode": "scaled", "a": 1.5, "rtt_unit": 50.0, "hz": 1000.0}),
]


@pytest.mark.kernel
@needs_host
@pytest.mark.parametrize(
    ("name", "params"), FLOWS, ids=[f"{n}-{p.get('k_mode', 'default')}" for n, p in FLOWS]
)
def test_each_program_registers_carries_a_flow_and_unregisters(netns, clean_registry, name, params):
    kname = bpf.ensure_registered(name, params)
    try:
        assert kname == bpf.kernel_name(name, params)
        assert kname in available_ccas()
        assert kname in bpf.registered()
        assert bpf.ensure_registered(name, params) == kname, "idempotent"
        client, server = run_flow(netns, kname)
        assert client["cc"] == kname and server["cc"] == kname, (client, server)
        assert server["bytes"] == client["sent"] >= MIN_BYTES, (client, server)
        assert client["last"]["cwnd"] >= 2
        if name == "dctcp":
            assert client["first"]["options"] & TCPI_OPT_ECN, "DCTCP negotiates ECN"
    finally:
        assert bpf.unregister(kname)
    assert kname not in available_ccas()
    assert kname not in bpf.registered()
    assert not bpf.unregister(kname), "a second unregister finds nothing"


@pytest.mark.kernel
@needs_host
def test_hybla_sets_cwnd_to_rho_at_init_so_its_parameter_reaches_the_kernel(netns, clean_registry):
    # hybla_init: cwnd = rho = srtt / rtt0 (at least 1). On a veth srtt is tens of us, so the
    # default rtt0 (25 ms) gives rho = 1, and rtt0 = 1 us gives rho = srtt in us.
    plain = bpf.ensure_registered("hybla")
    fast = bpf.ensure_registered("hybla", {"rtt0": 0.001})
    client, _ = run_flow(netns, plain, secs=0.2)
    assert client["first"]["cwnd"] == 1, client
    client, _ = run_flow(netns, fast, secs=0.2)
    rtt_us = client["first"]["rtt_us"]  # tcpi_rtt = srtt >> 3, the value hybla_init saw
    assert rtt_us >= 2 and client["first"]["cwnd"] == rtt_us, client


# A tc program that sets CE on every ECT packet leaving the client's veth: the only CE
# source on a kernel without RED or fq_codel.
CE_MARKER = """
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <stddef.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char _license[] SEC("license") = "GPL";

SEC("tc")
int ce_mark(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	__u16 old, new;
	__u8 tos;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	if ((ip->tos & 3) == 0 || (ip->tos & 3) == 3)	/* not ECT, or already CE */
		return TC_ACT_OK;
	old = *(__u16 *)ip;
	tos = ip->tos | 3;
	new = old;
	((__u8 *)&new)[1] = tos;
	bpf_l3_csum_replace(skb, ETH_HLEN + offsetof(struct iphdr, check), old, new, 2);
	bpf_skb_store_bytes(skb, ETH_HLEN + offsetof(struct iphdr, tos), &tos, 1, 0);
	return TC_ACT_OK;
}
"""


@pytest.mark.kernel
@needs_host
def test_dctcp_cuts_cwnd_when_every_packet_is_ce_marked(netns, clean_registry, tmp_path):
    # All packets marked: F = 1, alpha stays at 1 and every window halves cwnd, so the
    # window stays a few packets; unmarked, the same path lets cwnd grow until tbf drops.
    src = tmp_path / "ce_mark.c"
    src.write_text(CE_MARKER)
    obj = tmp_path / "ce_mark.o"
    multiarch = (
        subprocess.run(
            ["gcc", "-print-multiarch"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if shutil.which("gcc")
        else ""
    )
    subprocess.run(
        [
            "clang",
            "-O2",
            "-g",
            "-target",
            "bpf",
            *(["-I", f"/usr/include/{multiarch}"] if multiarch else []),
            "-c",
            str(src),
            "-o",
            str(obj),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    kname = bpf.ensure_registered("dctcp")
    plain, _ = run_flow(netns, kname)
    tc = ["tc", "-n", netns[0]]
    subprocess.run(
        [*tc, "qdisc", "add", "dev", "va", "clsact"], check=True, capture_output=True, timeout=10
    )
    try:
        subprocess.run(
            [
                *tc,
                "filter",
                "add",
                "dev",
                "va",
                "egress",
                "bpf",
                "direct-action",
                "obj",
                str(obj),
                "sec",
                "tc",
            ],
            check=True,
            capture_output=True,
            timeout=10,
        )
        marked, server = run_flow(netns, kname)
    finally:
        subprocess.run(
            [*tc, "qdisc", "del", "dev", "va", "clsact"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    assert plain["last"]["delivered_ce"] == 0, plain
    assert marked["last"]["delivered_ce"] > 0.5 * marked["last"]["cwnd"], marked
    assert server["bytes"] == marked["sent"] > 0
    assert marked["last"]["cwnd"] <= 10 < plain["last"]["cwnd"], (plain, marked)


@pytest.mark.kernel
@needs_host
def test_dctcp_without_ecn_falls_back_to_the_kernels_reno(netns, clean_registry):
    kname = bpf.ensure_registered("dctcp")
    sysctl = ["ip", "netns", "exec", netns[1], "sysctl", "-qw"]
    subprocess.run([*sysctl, "net.ipv4.tcp_ecn=0"], check=True, timeout=10)
    try:
        client, server = run_flow(netns, kname, server_cc="reno", secs=0.5)
    finally:
        subprocess.run([*sysctl, "net.ipv4.tcp_ecn=2"], check=True, timeout=10)
    assert not client["first"]["options"] & TCPI_OPT_ECN
    assert client["cc"] == "reno", client
    assert server["bytes"] == client["sent"] > 0


def satcc_map_ids(names: set[str] | None = None) -> set[int]:
    return {
        e["id"]
        for e in bpf._struct_ops_list()
        if e["name"].startswith("satcc_") and (names is None or e["name"] in names)
    }


@pytest.mark.kernel
@needs_host
def test_unregister_all_leaves_no_satcc_struct_ops(clean_registry):
    names = [bpf.ensure_registered(n) for n in ("hybla", "vegas")]
    names.append(bpf.ensure_registered("hybla", {"rtt0": 40.0}))
    assert set(names) <= set(bpf.registered())
    ours = satcc_map_ids(set(names)) - {e["id"] for e in bpf.lingering()}
    assert len(ours) == 3
    removed = bpf.unregister_all()
    assert set(removed) >= set(names)
    assert not [c for c in available_ccas() if c.startswith("satcc_")]
    # The maps themselves are freed after an RCU grace period; none was used by a socket.
    deadline = time.monotonic() + 10
    while satcc_map_ids() & ours and time.monotonic() < deadline:
        time.sleep(0.2)
    listing = subprocess.run(
        ["bpftool", "struct_ops", "list"], capture_output=True, text=True, timeout=10, check=True
    ).stdout
    assert not satcc_map_ids() & ours, listing
    # Anything satcc_ still listed is only a map that sockets elsewhere still hold.
    assert satcc_map_ids() == {e["id"] for e in bpf.lingering()}, listing
    assert bpf.unregister_all() == [], "idempotent"
    assert not list(bpf.RECORD_DIR.glob("satcc_*.json")), "records removed"


@pytest.mark.kernel
@needs_host
def test_a_name_registered_from_another_object_is_replaced(clean_registry):
    kname = bpf.ensure_registered("vegas")
    record = bpf.RECORD_DIR / f"{kname}.json"
    stale = json.loads(record.read_text())
    stale["object"] = "satcc_vegas-0000000000000000.o"  # as if an older source built it
    record.write_text(json.dumps(stale))
    before = satcc_map_ids({kname})
    assert bpf.ensure_registered("vegas") == kname
    new = satcc_map_ids({kname}) - before
    assert len(new) == 1, "re-registered from the current object"
    assert kname in available_ccas()
    assert bpf.ensure_registered("vegas") == kname
    assert satcc_map_ids({kname}) - before == new, "and then reused"


@pytest.mark.kernel
@needs_host
def test_unregister_refuses_names_that_are_not_satcc():
    with pytest.raises(bpf.BpfError):
        bpf.unregister("cubic")
