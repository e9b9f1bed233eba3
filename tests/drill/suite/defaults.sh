#!/bin/bash
# satcc's drill suite: the TCP settings every script starts from (the values of a stock
# kernel and packetdrill's usual ones), applied inside the drill's throwaway namespace.
# The simulator engine reads the same sysctl lines; docs/drill.md lists how each maps.
sysctl -q net.ipv4.tcp_rmem="4096 540000 15728640"
sysctl -q net.ipv4.tcp_wmem="4096 262144 4194304"
sysctl -q net.ipv4.tcp_timestamps=0
sysctl -q net.ipv4.tcp_sack=1
sysctl -q net.ipv4.tcp_dsack=1
sysctl -q net.ipv4.tcp_frto=2
sysctl -q net.ipv4.tcp_reordering=3
sysctl -q net.ipv4.tcp_congestion_control=cubic
sysctl -q net.ipv4.tcp_slow_start_after_idle=0
sysctl -q net.ipv4.tcp_early_retrans=3
sysctl -q net.ipv4.tcp_recovery=1
sysctl -q net.ipv4.tcp_ecn=0
sysctl -q net.ipv4.tcp_syncookies=1
# One segment per packet: no TSO/GSO on the test interface (the simulator has none).
ethtool -K tun0 sg off tso off gso off > /dev/null
tc qdisc replace dev tun0 root pfifo
sysctl -q net.ipv4.tcp_min_tso_segs=1
