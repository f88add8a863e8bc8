#!/usr/bin/env python3
"""p2p_copy --pcap's capture against dissectors no one in rig wrote (tests/support/roce_check.py):

    capture_test.py P2P_COPY ROCE_CHECK send|pull WORKDIR

Moves 64 KiB in 16 KiB messages (path MTU 4096: four packets each) over the p2p path of
p2p_copy's default machines (driver addresses ::ffff:192.0.2.1 and .2, the default of
rig/bnxt/nic.hpp), by SEND (machine 1 sends, machine 2 acknowledges) or with --pull by RDMA
READ (machine 2 asks, machine 1 answers), captures the cable and has roce_check.py decode
it. Exits as roce_check.py does (77: tshark or scapy missing).
"""
import os
import subprocess
import sys

EXPECT = {
    "send": ["192.0.2.1:SEND_FIRST,SEND_MIDDLE*2,SEND_LAST[4]", "192.0.2.2:ACKNOWLEDGE*+"],
    "pull": ["192.0.2.2:RDMA_READ_REQUEST[4]",
             "192.0.2.1:RDMA_READ_RESPONSE_FIRST,RDMA_READ_RESPONSE_MIDDLE*2,RDMA_READ_RESPONSE_LAST[4]"],
}


def main(p2p_copy, roce_check, mode, workdir):
    os.makedirs(workdir, exist_ok=True)
    pcap = os.path.join(workdir, f"{mode}.pcap")
    command = [p2p_copy, "--size", "64K", "--chunk", "16K", "--depth", "2", "--path", "p2p", "--pcap", pcap]
    if mode == "pull":
        command.append("--pull")
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        print(f"capture_test: {' '.join(command)}: exit {run.returncode}\n{run.stdout}{run.stderr}")
        return 1
    checker = [sys.executable, roce_check, pcap]
    for e in EXPECT[mode]:
        checker += ["--expect", e]
    return subprocess.run(checker, check=False).returncode


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[3] not in EXPECT:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
