// The system calls the local VFIO path makes, behind one interface (internal to rig_pci).
//
// Every open, ioctl, mmap, pread and flock of the VFIO code goes through a Kernel, so
// that its logic (the region-info argsz retry, the MSI-X table hole, the order of the
// container calls, the give-back at release) is tested against a fake Kernel that plays
// the kernel's part: a seam, not a link-time mock (docs/design.md, "Tests"). linux_kernel()
// is the real one. Failures are errno values, never -1 and a global.
//
// Fd and Mapping own what they name and give it back through the Kernel that made it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <span>
#include <string>
#include <utility>

namespace rig::pci::vfio {

// A system call's value, or the errno it failed with.
template <class T>
using Sys = std::expected<T, int>;

class Kernel {
public:
    virtual ~Kernel() = default;

    virtual bool exists(const std::string& path) = 0;
    virtual Sys<int> open(const std::string& path, int flags) = 0;
    virtual void close(int fd) = 0;
    // ioctl(2): its non-negative value.
    virtual Sys<int> ioctl(int fd, unsigned long request, void* argument) = 0;
    virtual Sys<std::byte*> mmap(std::byte* address, std::size_t bytes, int protection, int flags, int fd,
                                 std::uint64_t offset) = 0;
    virtual void munmap(std::byte* address, std::size_t bytes) = 0;
    // One pread(2)/pwrite(2): the bytes moved, which may be fewer than asked.
    virtual Sys<std::size_t> pread(int fd, std::span<std::byte> out, std::uint64_t offset) = 0;
    virtual Sys<std::size_t> pwrite(int fd, std::span<const std::byte> in, std::uint64_t offset) = 0;
    // flock(fd, LOCK_EX | LOCK_NB): EWOULDBLOCK where another open file holds it.
    virtual Sys<void> lock(int fd) = 0;
    // eventfd(0, EFD_CLOEXEC).
    virtual Sys<int> eventfd() = 0;
    // Waits up to `timeout` for an eventfd to count, then reads (and so clears) the
    // count: true if it counted, false on timeout.
    virtual Sys<bool> wait(int fd, std::chrono::nanoseconds timeout) = 0;
};

// The running kernel's system calls.
std::shared_ptr<Kernel> linux_kernel();

// strerror's words for an errno, "No such file or directory (errno 2)".
std::string errno_text(int error);

// An open file descriptor, closed through its Kernel when the Fd goes.
class Fd {
public:
    Fd() = default;
    Fd(Kernel& kernel, int fd) : kernel_(&kernel), fd_(fd) {}
    Fd(Fd&& other) noexcept : kernel_(other.kernel_), fd_(std::exchange(other.fd_, -1)) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) {
            reset();
            kernel_ = other.kernel_;
            fd_ = std::exchange(other.fd_, -1);
        }
        return *this;
    }
    ~Fd() { reset(); }
    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    void reset() {
        if (fd_ >= 0) kernel_->close(std::exchange(fd_, -1));
    }

private:
    Kernel* kernel_ = nullptr;
    int fd_ = -1;
};

// A range of the process's addresses mapped by mmap, unmapped when the Mapping goes.
class Mapping {
public:
    Mapping() = default;
    Mapping(Kernel& kernel, std::byte* base, std::size_t bytes) : kernel_(&kernel), base_(base), bytes_(bytes) {}
    Mapping(Mapping&& other) noexcept
        : kernel_(other.kernel_), base_(std::exchange(other.base_, nullptr)), bytes_(other.bytes_) {}
    Mapping& operator=(Mapping&& other) noexcept {
        if (this != &other) {
            reset();
            kernel_ = other.kernel_;
            base_ = std::exchange(other.base_, nullptr);
            bytes_ = other.bytes_;
        }
        return *this;
    }
    ~Mapping() { reset(); }
    std::byte* data() const { return base_; }
    std::size_t size() const { return bytes_; }
    // Forgets the range without unmapping it (its owner maps something else over it).
    std::byte* release() { return std::exchange(base_, nullptr); }
    void reset() {
        if (base_) kernel_->munmap(std::exchange(base_, nullptr), bytes_);
    }

private:
    Kernel* kernel_ = nullptr;
    std::byte* base_ = nullptr;
    std::size_t bytes_ = 0;
};

}  // namespace rig::pci::vfio
