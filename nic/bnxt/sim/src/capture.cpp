// A cable's capture (cable.hpp): frames into a pcap savefile through libpcap
// (pcap_open_dead_with_tstamp_precision, pcap_dump_open, pcap_dump), link type DLT_EN10MB,
// nanosecond timestamps (the savefile magic 0xA1B23C4D).
#include <pcap/pcap.h>
#include <time.h>

#include <algorithm>

#include "cable.hpp"

namespace rig::bnxt::sim::detail {

namespace {
// Whole frames: the longest a port takes is far below it.
constexpr int snap_bytes = 65535;
}  // namespace

Capture::~Capture() {
    close();
}

rig::Result<void> Capture::open(const std::filesystem::path& path) {
    close();
    pcap_t* dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, snap_bytes, PCAP_TSTAMP_PRECISION_NANO);
    if (dead == nullptr) return rig::fail("capture ", path.string(), ": libpcap could not make a capture handle");
    pcap_dumper_t* dumper = pcap_dump_open(dead, path.c_str());
    if (dumper == nullptr) {
        std::string why = pcap_geterr(dead);
        pcap_close(dead);
        return rig::fail("capture ", path.string(), ": ", why);
    }
    std::lock_guard lock(mutex_);
    dead_ = dead;
    dumper_ = dumper;
    last_ns_ = 0;
    on_.store(true, std::memory_order_relaxed);
    return {};
}

void Capture::close() {
    std::lock_guard lock(mutex_);
    on_.store(false, std::memory_order_relaxed);
    if (dumper_ != nullptr) pcap_dump_close(dumper_);  // flushes
    if (dead_ != nullptr) pcap_close(dead_);
    dumper_ = nullptr;
    dead_ = nullptr;
}

void Capture::write(std::span<const Frame> frames) {
    std::lock_guard lock(mutex_);
    if (dumper_ == nullptr) return;
    for (const Frame& f : frames) {
        timespec now{};
        clock_gettime(CLOCK_REALTIME, &now);
        // The real-time clock may step back (NTP); a capture's timestamps do not.
        last_ns_ = std::max(last_ns_, std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec);
        pcap_pkthdr header{};
        header.ts.tv_sec = static_cast<time_t>(last_ns_ / 1'000'000'000);
        header.ts.tv_usec = static_cast<suseconds_t>(last_ns_ % 1'000'000'000);  // nanoseconds: the precision asked for
        header.caplen = static_cast<bpf_u_int32>(std::min<std::size_t>(f.size(), snap_bytes));
        header.len = static_cast<bpf_u_int32>(f.size());
        pcap_dump(reinterpret_cast<u_char*>(dumper_), &header, reinterpret_cast<const u_char*>(f.data()));
    }
}

}  // namespace rig::bnxt::sim::detail
