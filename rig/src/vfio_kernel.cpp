// The running kernel's system calls for the VFIO path (vfio_kernel.hpp): each one a thin
// call that turns -1 and errno into the errno value, retrying EINTR.
#include "vfio_kernel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rig::pci::vfio {
namespace {

class LinuxKernel final : public Kernel {
public:
    bool exists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

    Sys<int> open(const std::string& path, int flags) override {
        for (;;) {
            const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
            if (fd >= 0) return fd;
            if (errno != EINTR) return std::unexpected(errno);
        }
    }

    void close(int fd) override { ::close(fd); }

    Sys<int> ioctl(int fd, unsigned long request, void* argument) override {
        for (;;) {
            const int value = ::ioctl(fd, request, argument);
            if (value >= 0) return value;
            if (errno != EINTR) return std::unexpected(errno);
        }
    }

    Sys<std::byte*> mmap(std::byte* address, std::size_t bytes, int protection, int flags, int fd,
                         std::uint64_t offset) override {
        void* p = ::mmap(address, bytes, protection, flags, fd, static_cast<off_t>(offset));
        if (p == MAP_FAILED) return std::unexpected(errno);
        return static_cast<std::byte*>(p);
    }

    void munmap(std::byte* address, std::size_t bytes) override { ::munmap(address, bytes); }

    Sys<std::size_t> pread(int fd, std::span<std::byte> out, std::uint64_t offset) override {
        for (;;) {
            const ssize_t n = ::pread(fd, out.data(), out.size(), static_cast<off_t>(offset));
            if (n >= 0) return static_cast<std::size_t>(n);
            if (errno != EINTR) return std::unexpected(errno);
        }
    }

    Sys<std::size_t> pwrite(int fd, std::span<const std::byte> in, std::uint64_t offset) override {
        for (;;) {
            const ssize_t n = ::pwrite(fd, in.data(), in.size(), static_cast<off_t>(offset));
            if (n >= 0) return static_cast<std::size_t>(n);
            if (errno != EINTR) return std::unexpected(errno);
        }
    }

    Sys<void> lock(int fd) override {
        for (;;) {
            if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return {};
            if (errno != EINTR) return std::unexpected(errno);
        }
    }

    Sys<int> eventfd() override {
        const int fd = ::eventfd(0, EFD_CLOEXEC);
        if (fd < 0) return std::unexpected(errno);
        return fd;
    }

    Sys<bool> wait(int fd, std::chrono::nanoseconds timeout) override {
        const auto ms = std::chrono::ceil<std::chrono::milliseconds>(timeout).count();
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, ms > INT32_MAX ? INT32_MAX : static_cast<int>(ms));
        if (ready < 0) return errno == EINTR ? Sys<bool>(false) : std::unexpected(errno);
        if (ready == 0) return false;
        std::uint64_t count = 0;
        if (::read(fd, &count, sizeof count) != sizeof count) return std::unexpected(errno);
        return true;
    }
};

}  // namespace

std::shared_ptr<Kernel> linux_kernel() {
    static const std::shared_ptr<Kernel> kernel = std::make_shared<LinuxKernel>();
    return kernel;
}

std::string errno_text(int error) {
    char buffer[256];
    // GNU strerror_r returns the message, which may or may not be in buffer.
    const char* text = ::strerror_r(error, buffer, sizeof buffer);
    return std::string(text) + " (errno " + std::to_string(error) + ")";
}

}  // namespace rig::pci::vfio
