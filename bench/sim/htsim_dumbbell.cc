// htsim twin of bench_sim's single-flow dumbbell, for bench/sim/run.sh --htsim.
//
// satcc's own driver code, compiled at benchmark time against a Broadcom/csg-htsim checkout
// (its sim/libhtsim.a and headers); no htsim code lives in satcc. One NewReno flow (htsim's
// TcpSrc: no SACK, RTO scanner every 10 ms) through one drop-tail queue at RATE, RTT split
// evenly between the forward and the return pipe, bulk from t = 0, for SECS simulated
// seconds. Prints one JSON line with the same fields bench_sim prints: CPU time of the event
// loop only, events (doNextEvent calls that did something), data segments, goodput.
//
// Usage: htsim_dumbbell --rate-bps N --rtt-ms N --queue-bytes N --secs N

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "config.h"
#include "eventlist.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "route.h"
#include "tcp.h"

static double cpu_seconds() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
    double rate_bps = 100e6, rtt_ms = 50, secs = 60;
    long queue_bytes = 625000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rate-bps")) rate_bps = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--rtt-ms")) rtt_ms = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--queue-bytes")) queue_bytes = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--secs")) secs = atof(argv[i + 1]);
        else { fprintf(stderr, "htsim_dumbbell: unknown option %s\n", argv[i]); return 2; }
    }
    EventList events;
    events.setEndtime(timeFromSec(secs));

    Queue bottleneck(static_cast<linkspeed_bps>(rate_bps), queue_bytes, events, nullptr);
    Pipe forward(timeFromMs(rtt_ms / 2), events);
    Pipe back(timeFromMs(rtt_ms / 2), events);
    TcpSrc src(nullptr, nullptr, events);
    TcpSink sink;
    TcpRtxTimerScanner scanner(timeFromMs(10), events);
    scanner.registerTcp(src);

    Route* out = new Route();
    out->push_back(&bottleneck);
    out->push_back(&forward);
    out->push_back(&sink);
    Route* in = new Route();
    in->push_back(&back);
    in->push_back(&src);
    src.connect(*out, *in, sink, 0);

    double t0 = cpu_seconds();
    unsigned long long n = 0;
    while (events.doNextEvent()) n++;
    double cpu = cpu_seconds() - t0;

    unsigned long long segments = src._packets_sent / Packet::data_packet_size();
    printf("{\"tool\":\"htsim\",\"cca\":\"newreno\",\"rate_bps\":%.0f,\"rtt_ms\":%g,\"secs\":%g,"
           "\"cpu_s\":%.4f,\"events\":%llu,\"data_segments\":%llu,\"segments_per_cpu_s\":%.0f,"
           "\"events_per_segment\":%.2f,\"goodput_bps\":%.0f}\n",
           rate_bps, rtt_ms, secs, cpu, n, segments, segments / cpu, (double)n / segments,
           src._last_acked * 8.0 / secs);
    return 0;
}
