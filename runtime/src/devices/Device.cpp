//===- Device.cpp - what a session runs a module on -----------------------===//

#include "devices/Device.h"

namespace lcc::runtime {

// Out of line: the vtables live here.
DeviceExecutable::~DeviceExecutable() = default;
CommandList::~CommandList() = default;
Device::~Device() = default;

} // namespace lcc::runtime
