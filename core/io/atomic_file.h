// Atomic file writes for the CLI and the compiler (Qt code uses QSaveFile).
//
// writeFileAtomically writes `bytes` to a new file in the destination's
// folder, fsyncs it, renames it over `path` and fsyncs the folder: readers,
// and a crash or kill at any moment, see either the previous file whole or
// the new one whole, never a mix or a truncated file. A failure (the folder
// is missing or read-only, the disk is full, a file-size limit) leaves the
// previous file untouched and no temporary file behind, and returns an
// kIoError Status naming the path and the system's reason.
//
// A symbolic link is followed (the file it points at is replaced, the link
// stays). A path that exists and is not a regular file (/dev/stdout, a FIFO)
// cannot be replaced and is written in place.
#pragma once

#include <string>
#include <string_view>

#include "core/support/status.h"

namespace hloscope {

Status writeFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace hloscope
