// What p2p_copy prints: a table for people, or one JSON object (--json), and a progress
// line on stderr while a transfer that has run for more than a second goes on.
//
// The JSON object, the shape issue 8 gives:
//   {"topology": "switch", "size": 268435456, "path_mtu": 4096,
//    "paths": [{"path": "p2p", "ran": true, "reason": "...", "bytes": 268435456,
//               "seconds": 0.21, "bytes_per_second": 1.27e9, "ceiling_bytes_per_second": 3.15e10,
//               "impossible": false, "verified": true}, ...]}
// "ceiling_bytes_per_second" is what the links carry (ceiling.hpp; null: unknown), and a
// figure above it is "impossible" (docs/bugs.md B30).
// A refused path has "ran": false, its reason, and 0 bytes, seconds and bytes_per_second.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "paths.hpp"

namespace p2p_copy {

struct Outcome {
    Path path = Path::P2p;
    bool ran = false;
    std::string reason;  // why it ran or was refused; what failed, where it failed
    std::uint64_t bytes = 0;
    double seconds = 0;
    bool verified = false;
    // The most the path's PCI Express links carry (ceiling.hpp), nullopt where unknown,
    // and which link that is; impossible where the figure is above it (then not verified).
    std::optional<double> ceiling_bytes_per_second;
    std::string ceiling;
    bool impossible = false;
    double bytes_per_second() const { return seconds > 0 ? static_cast<double>(bytes) / seconds : 0; }
    // A path that did not run, and why.
    static Outcome refused(Path path, std::string reason) {
        Outcome o;
        o.path = path;
        o.reason = std::move(reason);
        return o;
    }
};

struct Report {
    std::string topology;
    std::uint64_t size = 0;
    std::string gpu, nic;  // bus addresses, the same on both machines
    std::vector<Outcome> paths;
    // As two processes (session.hpp): which machine this process is and its peer, a line
    // of the table below the heading (not in the JSON object, whose shape stays); else "".
    std::string side;
    // The path MTU the queue pairs use (rig::bnxt::Qp::path_mtu), bytes; 0: not connected.
    std::uint32_t path_mtu = 0;
};

// The table: a heading line, one row per path (its throughput, then its links' ceiling),
// each row's reason and ceiling below it.
std::string table(const Report& report);
nlohmann::ordered_json json(const Report& report);  // keys in the order above

// "1.27 GB/s", "350.2 MB/s", "12.0 KB/s": decimal units, as bytes_per_second.
std::string throughput(double bytes_per_second);

// Writes "\r<path>: 128 MiB of 256 MiB (50%), 1.20 GB/s" to `out` at most four times a
// second once the transfer has run for a second by `now`; finish() ends the line if one
// was written. Disabled, it writes nothing.
class ProgressLine {
public:
    using Now = std::function<std::chrono::steady_clock::time_point()>;
    ProgressLine(
        std::FILE* out, std::string path, std::uint64_t total, bool enabled,
        Now now = [] { return std::chrono::steady_clock::now(); });
    void operator()(std::uint64_t done);
    // Ends the line, with the bytes of the last call where a line was written.
    void finish();

private:
    void write(std::uint64_t done, std::chrono::steady_clock::time_point now);

    std::FILE* out_;
    Now now_;
    std::string path_;
    std::uint64_t total_;
    bool enabled_, written_ = false;
    std::uint64_t done_ = 0;  // of the last call
    std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace p2p_copy
