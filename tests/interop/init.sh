#!/bin/busybox sh
# /init of the interop guest (guest_image.py bakes it in; guest.py boots it).
#
# Loads the kernel modules of /etc/rig/modules in their order, reads the test's settings and
# command from QEMU's fw_cfg (opt/rig/env: shell assignments; opt/rig/cmd: a shell script),
# puts RIG_IP on the RoCE NIC (eth0, the NIC whose MAC is RIG_MAC) and 10.0.2.15/24 on the
# user-mode NIC (eth1; the host is 10.0.2.2 there, and there is no default route), adds the
# Soft-RoCE device rxe0 on eth0, runs the command, prints its exit status and powers off.
#
# Console lines the host waits for (each alone on its line):
#   RIG-GUEST-READY <uptime s>      set up; the command starts now
#   RIG-LISTENING <port>            rig_serve: the served program listens on TCP <port>
#   RIG-GUEST-COUNTERS <rdma statistic of rxe0/1>
#   RIG-GUEST-EXIT <status>         the command's exit status (125: the set-up failed)
#
# The command may use:
#   rig_serve PORT PROGRAM ARGS...  runs PROGRAM, prints RIG-LISTENING once it listens on
#                                   PORT, returns its exit status
#   rig_wait_go                     returns once the host writes a line to the console
#                                   (guest.py's Guest.go)

# busybox's applets last in PATH: iproute2's ip, not busybox's, is "ip".
export PATH=/bin:/sbin:/usr/bin:/usr/sbin:/busybox
mkdir /busybox
/bin/busybox --install -s /busybox

fail() {
    echo "RIG-GUEST-ERROR $*"
    echo "RIG-GUEST-EXIT 125"
    poweroff -f
    sleep 60
}

rig_serve() {
    port=$1
    shift
    "$@" </dev/null &
    served=$!
    hex=$(printf '%04X' "$port")
    while kill -0 "$served" 2>/dev/null; do
        if grep -qE "^ *[0-9]+: [0-9A-F]+:$hex [0-9A-F]+:[0-9A-F]+ 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
            echo "RIG-LISTENING $port"
            break
        fi
        usleep 20000
    done
    wait "$served"
}

rig_wait_go() {
    read -r _ </dev/console
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
stty -echo </dev/console

while read -r module; do
    insmod "$module" || fail "insmod $module"
done </etc/rig/modules

settings=/sys/firmware/qemu_fw_cfg/by_name/opt/rig
[ -r $settings/env/raw ] || fail "no fw_cfg opt/rig/env"
[ -r $settings/cmd/raw ] || fail "no fw_cfg opt/rig/cmd"
RIG_IP=10.77.0.2
RIG_PREFIX=24
RIG_MTU=1500
. $settings/env/raw
cp $settings/cmd/raw /tmp/command.sh

# IPv6 stays off on every link, so that the RoCE cable carries only what the test caused
# (no router solicitations, no MLD); rxe's GID table does not need it.
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6

[ "$(cat /sys/class/net/eth0/address)" = "$RIG_MAC" ] ||
    fail "eth0 has MAC $(cat /sys/class/net/eth0/address), not the RoCE NIC's $RIG_MAC"
ip link set lo up
ip link set eth0 mtu "$RIG_MTU" || fail "ip link set eth0 mtu $RIG_MTU"
ip addr add "$RIG_IP/$RIG_PREFIX" dev eth0 || fail "ip addr add $RIG_IP/$RIG_PREFIX dev eth0"
ip link set eth0 up || fail "ip link set eth0 up"
ip addr add 10.0.2.15/24 dev eth1 || fail "ip addr add 10.0.2.15/24 dev eth1"
ip link set eth1 up || fail "ip link set eth1 up"
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 type rxe netdev eth0"

read -r uptime _ </proc/uptime
echo "RIG-GUEST-READY $uptime"
cd /tmp
(. /tmp/command.sh) </dev/null
status=$?
echo "RIG-GUEST-COUNTERS $(rdma statistic show link rxe0/1 2>&1 | tr '\n' ' ')"
echo "RIG-GUEST-EXIT $status"
poweroff -f
