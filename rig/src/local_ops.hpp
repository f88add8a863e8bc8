// The operations of this computer, behind Machine::local() and Machine::at(): the same
// Ops interface a transport gives (transport.hpp), so Function::take reaches local
// functions as it reaches remote ones. local_ops.cpp takes functions through Linux VFIO.
#pragma once

#include <filesystem>
#include <memory>

#include "rig/pci/transport.hpp"

namespace rig::pci {

// This process's operations: page() is the system's page size, reserve() goes to
// reserve_addresses (reservation.hpp), take() opens a function through VFIO, failed() is
// always nullopt. functions() is not used: local() lists its functions from sysfs.
std::shared_ptr<Ops> local_ops();

namespace vfio {
class Kernel;
}
// The same operations over the sysfs files and device nodes under `root` (root/sys/...,
// root/dev/vfio/...), making their system calls through `kernel`: for tests, with a
// fixture tree and a fake kernel (vfio_kernel.hpp).
std::shared_ptr<Ops> local_ops(std::filesystem::path root, std::shared_ptr<vfio::Kernel> kernel);

}  // namespace rig::pci
