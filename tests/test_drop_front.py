"""A drop-front queue (`drop = "front"`) through the CLI: `satcc check` shows it, a bad value is
refused naming the file and the key, and `satcc sim` runs it, dropping the queue's oldest packet
where drop-tail drops the arrival (satcc-core direction.rs, the queue both engines run)."""

import json

from satcc import cli
from satcc import results as rs
from tests.helpers import requires_sim

# One Reno flow into a 10 Mbit/s bottleneck with a 20-packet queue and no random loss: every
# loss is a queue overflow. A drop-front queue drops the oldest queued segment, so the sender's
# duplicate ACKs come back a queue's sojourn sooner than for the tail's arrival.
BOTTLENECK = """
[scenario]
name = "bottleneck"
duration = "3 s"
seed = 1
bin = "100 ms"

[[link]]
a = "s"
b = "d"
rate = "10 Mbit/s"
delay = "20 ms"
queue = "20 pkt"
DROP

[[flow]]
from = "s"
to = "d"
cca = "reno"
"""


def _scenario(write_toml, drop: str, name: str):
    return write_toml(BOTTLENECK.replace("DROP", drop), name=name)


def test_check_shows_a_drop_front_queue(write_toml, capsys):
    path = _scenario(write_toml, 'drop = "front"\ndrop_ba = "tail"', "front.toml")
    assert cli.main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "s→d: 10.00 Mbit/s, 20 ms, loss 0, queue 20 pkt drop-front\n" in out, out
    assert "d→s: 10.00 Mbit/s, 20 ms, loss 0, queue 20 pkt\n" in out, out


def test_a_bad_drop_is_refused_with_the_file_and_key(write_toml, capsys):
    path = _scenario(write_toml, 'drop = "random"', "bad.toml")
    assert cli.main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: link[0].drop: expected one of 'tail', 'front', found 'random'" in err, err


@requires_sim
def test_sim_drops_the_oldest_packet_and_the_sender_sees_the_loss_sooner(
    write_toml, tmp_path, capsys
):
    runs = {}
    for drop in ("tail", "front"):
        path = _scenario(write_toml, f'drop = "{drop}"', f"{drop}.toml")
        out = tmp_path / drop
        assert cli.main(["sim", str(path), "--out", str(out), "--json"]) == 0
        runs[drop] = (json.loads(capsys.readouterr().out), rs.load(out))
    (tail_doc, tail), (front_doc, front) = runs["tail"], runs["front"]
    assert tail_doc["scenario_hash"] != front_doc["scenario_hash"]

    def first_bin(r, series, column):
        s = series(r)
        hit = s[s[column] > 0]
        return float(hit["t_s"].min())

    def link(r):
        return r.link_series[(r.link_series["link_id"] == 0) & (r.link_series["dir"] == "ab")]

    def flow(r):
        return r.flow_series

    # Both queues overflow in slow start, in the same bin: the offered load is the same until
    # the first drop.
    assert first_bin(tail, link, "drops_queue") == first_bin(front, link, "drops_queue")
    # The tail drops the arrival, which waits behind a full queue to be missed; the front
    # drops the head, whose successors arrive right away: the sender retransmits a queue's
    # sojourn (here 20 x 1.2 ms) sooner, in an earlier bin, and stops slow start's overshoot
    # sooner, so the queue drops fewer packets.
    assert first_bin(front, flow, "retransmits") < first_bin(tail, flow, "retransmits")
    drops = {k: int(link(r)["drops_queue"].sum()) for k, r in (("tail", tail), ("front", front))}
    assert 0 < drops["front"] < drops["tail"], drops
    for r in (tail, front):
        assert int(link(r)["drops_random"].sum()) == 0
