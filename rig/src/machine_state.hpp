// What a Machine handle shares (internal to rig_pci; Function::take reads it through
// Machine::ops() and Machine::root()). Immutable once made but for its Claims, which lock
// themselves, so every copy of a Machine and every thread reads it without a lock.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "rig/pci/claim.hpp"
#include "rig/pci/machine.hpp"
#include "rig/pci/transport.hpp"

namespace rig::pci {

struct Machine::State {
    enum class Kind {
        Local,      // Machine::local(): this computer, sysfs at "/", ops = local_ops()
        Files,      // Machine::at(root): sysfs files only, no ops
        Transport,  // Machine::make(): a transport's ops, sysfs files if it sent them
    };
    Kind kind = Kind::Local;
    std::optional<std::string> name;            // the transport's name; nullopt without one
    std::shared_ptr<Ops> ops;                   // nullptr for Files
    std::optional<std::filesystem::path> root;  // where routes read sysfs; nullopt: every function unread
    // The claims on its bus addresses: the one mutable part, which locks itself.
    std::shared_ptr<Claims> claims = std::make_shared<Claims>();
};

}  // namespace rig::pci
