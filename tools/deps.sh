#!/bin/sh
# Installs the Debian 12 packages rig builds with, where they are missing. Needs root
# (or sudo). The CUDA toolkit is not a Debian package: the CUDA backend is built where
# /usr/local/cuda/bin/nvcc exists and skipped with a message where not. The interop tests
# (tests/interop) boot QEMU guests (qemu-system-x86) built from Debian packages that they
# fetch themselves with apt-get download, and read captures with tshark; the capture tests
# decode rig's frames with tshark and scapy's RoCE layer (python3-scapy). The Python module
# (python/) builds with python3-dev, pybind11-dev and libdlpack-dev for /usr/bin/python3, and
# its tests run there with python3-pytest, python3-numpy and python3-torch.
set -eu
packages="g++ cmake ninja-build pkg-config libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev
nlohmann-json3-dev libcli11-dev linux-libc-dev hipcc libamdhip64-dev libdrm-dev ccache pciutils valgrind
libpcap-dev tshark python3 python3-scapy qemu-system-x86 clang-15
python3-dev pybind11-dev libdlpack-dev python3-pytest python3-numpy python3-torch"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "rig: installing$missing" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
