// The tests every GPU backend passes (contract.cpp), run by each backend's test
// executable with its own Platform: the simulated GPU on a simulated machine, CUDA and
// HIP on the machine's GPUs, where a test needing a GPU the machine lacks exits 77.
#pragma once

#include <cstdint>
#include <deque>
#include <stdexcept>
#include <vector>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "rig/gpu/gpu.hpp"
#include "rig/space.hpp"

namespace rig::gpu::test {

class Platform {
public:
    virtual ~Platform() = default;
    // A fresh Space of the vendor.
    virtual std::shared_ptr<Space> space() = 0;
    // GPU `index` on `space`. Exits 77 (skipped) where the machine has fewer GPUs.
    virtual Gpu gpu(int index, std::shared_ptr<Space> space) = 0;
    // `bytes` of zeroed host memory that `gpu`'s copy engine reaches, alive as long as the
    // Platform.
    virtual HostBuffer host(const Gpu& gpu, std::uint64_t bytes) = 0;
    // A size `gpu` has not the memory for (a Space range for it is free).
    virtual std::uint64_t too_large(const Gpu& gpu) = 0;
    // Whether Memory::runs gives runs (else an Error naming the GPU).
    virtual bool publishes_runs() const = 0;
};

struct Backend {
    std::string name;
    std::function<std::unique_ptr<Platform>()> make;
    friend std::ostream& operator<<(std::ostream& os, const Backend& b) { return os << b.name; }
};

// The test suite; instantiate it with INSTANTIATE_TEST_SUITE_P(name, Contract, Values(Backend{...})).
class Contract : public ::testing::TestWithParam<Backend> {
protected:
    void SetUp() override;
    Gpu gpu(int index);

    std::unique_ptr<Platform> platform;
    std::shared_ptr<Space> space;
};

// Exits 77, which CTest counts as skipped: the machine lacks what the test needs.
[[noreturn]] void skip(const std::string& why);

// The value of r, or an exception carrying its error (which fails the test with it).
template <class T>
T must(Result<T> r) {
    if (!r) throw std::runtime_error(r.error());
    return std::move(*r);
}
inline void must(Result<void> r) {
    if (!r) throw std::runtime_error(r.error());
}

// Zeroed host memory of the process, for backends whose copies go through it (CUDA, HIP);
// it lives as long as this.
class ProcessMemory {
public:
    HostBuffer host(std::uint64_t bytes) { return HostBuffer::of(std::span(buffers_.emplace_back(bytes))); }

private:
    std::deque<std::vector<std::byte>> buffers_;
};

}  // namespace rig::gpu::test
