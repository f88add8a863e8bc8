#!/usr/bin/env python3
"""Regenerates tests/interop/fixtures/: the first frames of real rxe traffic between two
guests, cut from the server guest's captures (fixtures/README.md says what each holds).

    make_fixtures.py WORKDIR [FIXTURES_DIR]

Runs five short guest pairs (about two minutes on 2 cores). PSNs, rkeys, addresses and
timestamps differ from run to run; fixtures_test.py checks what does not.
"""

from __future__ import annotations

import sys
from pathlib import Path

import capture
import guest_image
import rxe_pair

HERE = Path(__file__).resolve().parent


def cut(source: Path, target: Path, wanted, limit: int) -> int:
    """Writes the first `limit` frames of `source` for which wanted(frame) holds."""
    header, records = capture.read_pcap(source)
    decoded = capture.frames(source)
    chosen = [records[f.number - 1] for f in decoded if wanted(f)][:limit]
    capture.write_pcap(target, header, chosen)
    return len(chosen)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    work = Path(argv[1])
    out = Path(argv[2]) if len(argv) == 3 else HERE / "fixtures"
    out.mkdir(parents=True, exist_ok=True)
    image = guest_image.build()
    is_roce = lambda f: f.opcode is not None  # noqa: E731
    runs = [
        # fixture stem, server command, client command, RoCE frames kept
        ("rc_pingpong_64", "ibv_rc_pingpong -g 1 -s 64 -n 4 -m 1024", 8),
        ("rc_pingpong_1027", "ibv_rc_pingpong -g 1 -s 1027 -n 2 -m 1024", 6),
        ("rc_pingpong_4096", "ibv_rc_pingpong -g 1 -s 4096 -n 2 -m 1024", 10),
        ("ib_send_bw_4096", "ib_send_bw -x 1 -s 4096 -n 5 -m 1024", 10),  # perftest's least -n
        ("ib_read_bw_4096", "ib_read_bw -x 1 -s 4096 -n 5 -m 1024", 10),
    ]
    for stem, command, keep in runs:
        pair = rxe_pair.run_pair(work / stem, command, f"{command} -p $PORT $SERVER", timeout=300, image=image)
        if pair.server_status or pair.client_status:
            print(f"{stem}: exit status server {pair.server_status}, client {pair.client_status}", file=sys.stderr)
            return 1
        n = cut(pair.server.pcap, out / f"{stem}.pcap", is_roce, keep)
        print(f"{stem}.pcap: {n} RoCE frames")
        if stem == "rc_pingpong_4096":
            n = cut(pair.server.pcap, out / "arp.pcap", lambda f: f.protocols == "eth:ethertype:arp", 2)
            print(f"arp.pcap: {n} frames")
        if stem.startswith("ib_") or stem == "rc_pingpong_4096":
            exchange = stem.rsplit("_", 1)[0] + "_exchange.pcap"
            n = cut(pair.client.tcp_pcap, out / exchange, lambda f: f.protocols.startswith("eth:ethertype:ip:tcp"), 200)
            print(f"{exchange}: {n} frames")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
