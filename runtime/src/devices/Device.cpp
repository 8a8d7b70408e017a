//===- Device.cpp - what a session runs a module on -----------------------===//

#include "devices/Device.h"

namespace lcc::runtime {

// Out of line: the vtables live here.
DeviceExecutable::~DeviceExecutable() = default;
CommandList::~CommandList() = default;
Device::~Device() = default;

Status CommandList::rebind(size_t, size_t, void *) {
  return Status::error(StatusCode::Internal,
                       "this device's commands read inputs from device "
                       "memory only");
}

} // namespace lcc::runtime
