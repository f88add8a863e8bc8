// A pcap file as libpcap reads it back (pcap_open_offline_with_tstamp_precision,
// pcap_next_ex): each record's timestamp in nanoseconds, its length on the wire and the
// bytes captured. Tests that read captures link libpcap (`pcap`).
#pragma once

#include <pcap/pcap.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace rig::test {

struct CapturedFrame {
    std::int64_t ns = 0;       // since the epoch
    std::uint32_t length = 0;  // on the wire
    std::vector<std::byte> bytes;
};

struct Capture {
    int link_type = -1;
    std::vector<CapturedFrame> frames;
};

inline Capture read_pcap(const std::filesystem::path& path) {
    char error[PCAP_ERRBUF_SIZE] = {};
    pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, error);
    if (p == nullptr) throw std::runtime_error(path.string() + ": " + error);
    Capture c;
    c.link_type = pcap_datalink(p);
    pcap_pkthdr* header = nullptr;
    const u_char* data = nullptr;
    while (pcap_next_ex(p, &header, &data) == 1) {
        CapturedFrame f;
        f.ns = std::int64_t{header->ts.tv_sec} * 1'000'000'000 + header->ts.tv_usec;
        f.length = header->len;
        const auto* first = reinterpret_cast<const std::byte*>(data);
        f.bytes.assign(first, first + header->caplen);
        c.frames.push_back(std::move(f));
    }
    pcap_close(p);
    return c;
}

// How many frames of `c` come from source MAC `mac` (bytes 6-11 of the frame).
inline std::size_t frames_from(const Capture& c, const std::array<std::uint8_t, 6>& mac) {
    std::size_t n = 0;
    for (const CapturedFrame& f : c.frames) {
        bool same = f.bytes.size() >= 12;
        for (std::size_t i = 0; same && i < 6; ++i) same = f.bytes[6 + i] == std::byte{mac[i]};
        n += same ? 1 : 0;
    }
    return n;
}

}  // namespace rig::test
