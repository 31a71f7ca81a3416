"""packets.pcap read by a pcap library (dpkt), not by our own parser: the file
is what Wireshark, tcpdump and scapy users get (docs/output.md, "pcap")."""

import csv
import math
import os
import pathlib
import subprocess
import sys

import dpkt  # in the test extra: pip install '.[test]'

# One 10-packet SIRD message from host 0 to host 1 over a 30 Gbps bottleneck.
EXPERIMENT = (pathlib.Path(__file__).parents[2] / "experiments" / "micro" / "one-message.toml").read_text() + """
[output]
pcap_flows = [[0, 1]]
pcap_snaplen = 65535
"""


def run(tmp_path):
    exp = tmp_path / "exp.toml"
    exp.write_text(EXPERIMENT)
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k not in ("FABRICLAB_ROOT", "FABRICLAB_PYTHON")}
    r = subprocess.run([sys.executable, "-m", "fabriclab", "run", str(exp), "--out", str(out), "-q"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    return out


def test_a_pcap_library_reads_every_packet_and_its_headers(tmp_path):
    out = run(tmp_path)
    with open(out / "packets.pcap", "rb") as f:
        reader = dpkt.pcap.Reader(f)
        assert reader.datalink() == dpkt.pcap.DLT_EN10MB
        assert reader.snaplen == 65535
        # A nanosecond pcap: dpkt gives each timestamp as an exact Decimal of seconds.
        records = [(int(ts * 10**9), buf) for ts, buf in reader]
    with open(out / "messages.csv") as f:
        msg = next(csv.DictReader(f))
    assert len(records) > 10
    assert all(a[0] <= b[0] for a, b in zip(records, records[1:])), "timestamps go back"

    data_sent, data_received = [], []
    for ts, buf in records:
        eth = dpkt.ethernet.Ethernet(buf)
        ip = eth.data
        assert isinstance(ip, dpkt.ip.IP), "not IPv4"
        # The header checksum is valid: dpkt recomputes it when asked to pack
        # the header with the sum cleared.
        stored = ip.sum
        ip.sum = 0
        assert dpkt.ip.IP(bytes(ip)).sum == stored
        assert ip.len + 14 == len(buf), "a snap length of 65535 keeps the whole frame"
        udp = ip.data
        assert isinstance(udp, dpkt.udp.UDP)
        assert udp.sport == udp.dport and udp.sport >= 40000
        src, dst = ip.src[-1], ip.dst[-1]  # 10.0.0.0 + host id
        assert {src, dst} == {0, 1}, "only the pair asked for is captured"
        assert eth.src == bytes([2, 0, 0, 0, 0, src])
        payload = bytes(udp.data)
        assert payload[:2] == b"FL"
        direction = payload[3]
        if len(buf) == 14 + 1538 and src == 0:
            (data_sent if direction == 0 else data_received).append(ts)

    # 14,600 B in ten full packets, each seen leaving host 0 and arriving at host 1.
    assert (len(data_sent), len(data_received)) == (10, 10)
    start_us, end_us = float(msg["start_us"]), float(msg["end_us"])
    assert data_sent[0] == round(start_us * 1e3)
    # Back to back at 100 Gbps: 1,538 B every 123.04 ns (timestamps in whole ns).
    assert data_sent[-1] - data_sent[0] == 9 * 123
    assert data_received[-1] == math.floor(end_us * 1e3)
