// ns-3 twin of crates/satcc-sim/examples/bench_sim.rs: the same dumbbell, the same flags,
// the same one-line JSON output, so bench/sim/run.sh can hand both tools the same case.
//
//   s0 -access(10 Gbit/s, RTT0/2 - B)-+
//   s1 -access(10 Gbit/s, RTT1/2 - B)-+- r -bottleneck(rate, B one way, queue, loss ->)- d
//
// One sender node per RTT group (--group RTT_MS:COUNT, repeatable), one router, one
// receiver; B (--bneck-delay-us, default 500) is the bottleneck's one-way delay, so each
// group's base RTT is exactly RTT_MS. Random loss (--loss) hits the bottleneck's forward
// direction only (a RateErrorModel on the receiver's device). Bulk flows (BulkSend ->
// PacketSink), all starting at 0 s.
//
// Set to satcc's defaults (FlowConfig::bulk) as far as ns-3 allows:
//   SACK, timestamps, window scaling on; segment size = --mss (1448 -> 1500-byte IP packets
//   with the 12-byte timestamps option); initial cwnd 10; delayed ACK every 2nd segment with
//   a 40 ms timer; min RTO 200 ms; send and receive buffers 16 MB; SYN timeout 1 s; PRR
//   recovery (ns-3.37's default); no pacing (ns-3's default, as Linux without fq for CUBIC);
//   the traffic-control layer (fq_codel by default) is removed from every device, so the
//   only queue is the device's drop-tail queue, sized by --queue-bytes / --queue-pkts on the
//   bottleneck (both directions) and 100,000 packets on the access links.
// Remaining differences are listed in BENCHMARKS.md, section "Simulator".
//
// Build (bench/sim/run.sh does it): g++ -O3 -std=c++17 ns3_dumbbell.cc -o ns3_dumbbell
//          -lns3-core -lns3-network -lns3-internet -lns3-point-to-point -lns3-applications -lns3-traffic-control
// Output fields: wall_s and cpu_s (Simulator::Run only), events (Simulator::GetEventCount), packets
// (packets handed to any device, i.e. hops, MacTx), data_segments (data segments the senders'
// sockets sent, retransmissions included), retransmissions (segments starting below the
// highest sequence already sent), goodput_bps per flow (bytes received by each sink),
// data_pkt_bytes (largest data packet, IP bytes: checks the 1500-byte packets).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

const char* kAccessRate = "10Gbps";  // never the bottleneck
const char* kAccessQueue = "100000p"; // never drops
const uint32_t kSocketBuffer = 16000000; // bytes: satcc's default rwnd (16 MB)
const uint32_t kBulkChunk = 131072;      // bytes the application writes per call
const uint32_t kIpHeader = 20;           // bytes, IPv4 without options

uint64_t g_hops = 0;
uint64_t g_data_segments = 0;
uint64_t g_retransmissions = 0;
uint32_t g_data_pkt_bytes = 0;
// Per flow: the highest sequence number sent so far (end of the segment).
std::vector<SequenceNumber32> g_high_seq;
std::vector<bool> g_sent_any;

void
OnAnyMacTx(Ptr<const Packet>)
{
    g_hops++;
}

// TcpSocketBase "Tx": every segment a sender hands to IP (payload, header).
void
OnSenderTcpTx(uint32_t flow, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() == 0)
    {
        return; // SYN, FIN or pure ACK
    }
    g_data_segments++;
    g_data_pkt_bytes = std::max(g_data_pkt_bytes, p->GetSize() + h.GetSerializedSize() + kIpHeader);
    SequenceNumber32 end = h.GetSequenceNumber() + p->GetSize();
    if (g_sent_any[flow] && h.GetSequenceNumber() < g_high_seq[flow])
    {
        g_retransmissions++; // starts below what was already sent (wrap-safe compare)
    }
    if (!g_sent_any[flow] || g_high_seq[flow] < end)
    {
        g_high_seq[flow] = end;
        g_sent_any[flow] = true;
    }
}

// Hook the Tx trace once BulkSend has created its socket (in StartApplication, at 0 s).
void
HookSenderSocket(uint32_t flow, Ptr<BulkSendApplication> app)
{
    app->GetSocket()->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnSenderTcpTx, flow));
}

// CPU time of this process, seconds: unlike wall time, not inflated by other load.
double
CpuSeconds()
{
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

[[noreturn]] void
Usage(const std::string& msg)
{
    std::fprintf(stderr, "ns3_dumbbell: %s\n", msg.c_str());
    std::fprintf(stderr,
                 "usage: ns3_dumbbell --cca NAME --rate-bps N --group RTT_MS:COUNT [--group ...] "
                 "(--queue-bytes N | --queue-pkts N) [--loss P] [--mss BYTES] [--secs S] "
                 "[--seed N] [--bneck-delay-us US]\n");
    std::exit(2);
}

// satcc registry name -> ns-3 congestion-control TypeId.
std::string
Ns3Cca(const std::string& name)
{
    static const std::map<std::string, std::string> table = {
        {"cubic", "ns3::TcpCubic"},
        {"reno", "ns3::TcpLinuxReno"},
        {"newreno", "ns3::TcpNewReno"},
        {"hybla", "ns3::TcpHybla"},
        {"bbr", "ns3::TcpBbr"},
        {"vegas", "ns3::TcpVegas"},
        {"yeah", "ns3::TcpYeah"},
        {"dctcp", "ns3::TcpDctcp"},
    };
    auto it = table.find(name);
    if (it == table.end())
    {
        Usage("no ns-3 twin for --cca " + name);
    }
    return it->second;
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string cca = "cubic";
    double rate_bps = 0;
    std::vector<std::pair<double, uint32_t>> groups;
    std::string queue = "1000p";
    double loss = 0;
    uint32_t mss = 1448;
    double secs = 60;
    uint32_t seed = 1;
    uint64_t bneck_delay_us = 500;

    for (int i = 1; i < argc; i++)
    {
        std::string flag = argv[i];
        if (flag == "-h" || flag == "--help")
        {
            Usage("help");
        }
        if (i + 1 >= argc)
        {
            Usage(flag + " needs a value");
        }
        std::string v = argv[++i];
        if (flag == "--cca")
            cca = v;
        else if (flag == "--rate-bps")
            rate_bps = std::stod(v);
        else if (flag == "--group")
        {
            auto colon = v.find(':');
            if (colon == std::string::npos)
                Usage("--group wants RTT_MS:COUNT");
            groups.emplace_back(std::stod(v.substr(0, colon)),
                                static_cast<uint32_t>(std::stoul(v.substr(colon + 1))));
        }
        else if (flag == "--queue-bytes")
            queue = std::to_string(static_cast<uint64_t>(std::stod(v))) + "B";
        else if (flag == "--queue-pkts")
            queue = v + "p";
        else if (flag == "--loss")
            loss = std::stod(v);
        else if (flag == "--mss")
            mss = static_cast<uint32_t>(std::stoul(v));
        else if (flag == "--secs")
            secs = std::stod(v);
        else if (flag == "--seed")
            seed = static_cast<uint32_t>(std::stoul(v));
        else if (flag == "--bneck-delay-us")
            bneck_delay_us = std::stoull(v);
        else
            Usage("unknown flag " + flag);
    }
    if (rate_bps <= 0 || groups.empty())
    {
        Usage("--rate-bps and at least one --group are required");
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // TCP: satcc's defaults (see the header).
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(Ns3Cca(cca))));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(kSocketBuffer));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(kSocketBuffer));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));

    const uint32_t g = groups.size();
    NodeContainer senders;
    senders.Create(g);
    Ptr<Node> router = CreateObject<Node>();
    Ptr<Node> receiver = CreateObject<Node>();
    NodeContainer all(senders);
    all.Add(router);
    all.Add(receiver);
    InternetStackHelper stack;
    stack.InstallAll();

    std::vector<NetDeviceContainer> access(g);
    for (uint32_t i = 0; i < g; i++)
    {
        uint64_t half_rtt_us = static_cast<uint64_t>(groups[i].first * 1000.0 / 2.0 + 0.5);
        if (half_rtt_us < bneck_delay_us)
        {
            Usage("an RTT is below twice the bottleneck delay");
        }
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", StringValue(kAccessRate));
        p2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(half_rtt_us - bneck_delay_us)));
        p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue(kAccessQueue));
        access[i] = p2p.Install(senders.Get(i), router);
    }
    PointToPointHelper bp2p;
    bp2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(rate_bps))));
    bp2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(bneck_delay_us)));
    bp2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue(queue));
    NetDeviceContainer bneck = bp2p.Install(router, receiver);
    if (loss > 0)
    {
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
        em->SetRate(loss);
        bneck.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));
    }

    Ipv4AddressHelper addr;
    std::vector<NetDeviceContainer> devs(access);
    devs.push_back(bneck);
    Ipv4InterfaceContainer bneck_if;
    for (uint32_t i = 0; i < devs.size(); i++)
    {
        std::string net = "10." + std::to_string(i + 1) + ".0.0";
        addr.SetBase(net.c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ifc = addr.Assign(devs[i]);
        if (i == devs.size() - 1)
            bneck_if = ifc;
    }
    // Address assignment installs fq_codel on every device; remove it so the device's
    // drop-tail queue is the only queue, as in satcc.
    TrafficControlHelper tch;
    uint32_t qdiscs_left = 0;
    for (auto& d : devs)
    {
        tch.Uninstall(d);
        for (uint32_t k = 0; k < d.GetN(); k++)
        {
            Ptr<TrafficControlLayer> tc = d.Get(k)->GetNode()->GetObject<TrafficControlLayer>();
            if (tc && tc->GetRootQueueDiscOnDevice(d.Get(k)))
                qdiscs_left++;
            d.Get(k)->TraceConnectWithoutContext("MacTx", MakeCallback(&OnAnyMacTx));
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    Ipv4Address dst = bneck_if.GetAddress(1);
    std::vector<Ptr<PacketSink>> sinks;
    uint16_t port = 5000;
    for (uint32_t i = 0; i < g; i++)
    {
        for (uint32_t k = 0; k < groups[i].second; k++, port++)
        {
            PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
            ApplicationContainer sa = sink.Install(receiver);
            sa.Start(Seconds(0));
            sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));
            BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(dst, port));
            bulk.SetAttribute("MaxBytes", UintegerValue(0));
            bulk.SetAttribute("SendSize", UintegerValue(kBulkChunk));
            ApplicationContainer ba = bulk.Install(senders.Get(i));
            ba.Start(Seconds(0));
            // Before the first data segment (which needs the SYN-ACK, >= 1 RTT later).
            Simulator::Schedule(NanoSeconds(1), &HookSenderSocket, uint32_t(sinks.size() - 1),
                                DynamicCast<BulkSendApplication>(ba.Get(0)));
        }
    }

    g_high_seq.assign(sinks.size(), SequenceNumber32(0));
    g_sent_any.assign(sinks.size(), false);
    Simulator::Stop(Seconds(secs));
    auto t0 = std::chrono::steady_clock::now();
    double cpu0 = CpuSeconds();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double cpu = CpuSeconds() - cpu0;
    uint64_t events = Simulator::GetEventCount();

    std::string goodputs;
    double total = 0;
    for (size_t i = 0; i < sinks.size(); i++)
    {
        double gp = sinks[i]->GetTotalRx() * 8.0 / secs;
        total += gp;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.0f", i ? "," : "", gp);
        goodputs += buf;
    }
    std::string gs;
    for (size_t i = 0; i < groups.size(); i++)
    {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s[%g,%u]", i ? "," : "", groups[i].first, groups[i].second);
        gs += buf;
    }
    std::printf("{\"tool\":\"ns-3.37\",\"cca\":\"%s\",\"rate_bps\":%.0f,\"groups\":[%s],\"secs\":%g,"
                "\"wall_s\":%.4f,\"cpu_s\":%.4f,\"events\":%llu,\"packets\":%llu,\"data_segments\":%llu,"
                "\"retransmissions\":%llu,"
                "\"events_per_s\":%.0f,\"packets_per_s\":%.0f,\"segments_per_s\":%.0f,"
                "\"goodput_total_bps\":%.0f,\"goodput_bps\":[%s],\"data_pkt_bytes\":%u,"
                "\"qdiscs_left\":%u}\n",
                cca.c_str(), rate_bps, gs.c_str(), secs, wall, cpu, (unsigned long long)events,
                (unsigned long long)g_hops, (unsigned long long)g_data_segments,
                (unsigned long long)g_retransmissions, events / wall,
                g_hops / wall, g_data_segments / wall, total, goodputs.c_str(), g_data_pkt_bytes,
                qdiscs_left);
    Simulator::Destroy();
    return 0;
}
