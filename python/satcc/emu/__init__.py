"""The real-kernel emulator (`satcc emu`): a scenario's nodes as network namespaces, its links
emulated by satcc-linkd (crates/satcc-emu), its flows as real iperf3 over the kernel's TCP.

| module      | what it does                                                              |
|-------------|---------------------------------------------------------------------------|
| host        | root check, commands, namespaces, processes, run records, cleanup         |
| topology    | the plan (names, addresses, routes, queues, sysctls) and building it      |
| linkd       | satcc-linkd's binary, configuration and process                           |
| traffic     | iperf3 servers/clients, `ss -tin` parsing, tcpdump                        |
| xfer        | satcc's own sender/receiver: limited transfers, on/off and request apps   |
| apps        | per-period, per-request and cwnd-after-idle records of both engines       |
| runner      | one run start to finish, teardown on every exit path                      |
| doctor      | what this host supports, with the fix for each gap                        |
| vpn         | study 000's VPN: OpenVPN server and clients in the namespaces (`--vpn`)     |
| bpf         | BPF struct_ops CCAs (written separately; optional here)                   |

Pitfalls: everything needs root; nothing may touch the host's own namespace (veths are created
inside the node namespaces with their peers moved straight into the emulator's); children are
started from the main thread only (PR_SET_PDEATHSIG follows the forking thread).
"""
